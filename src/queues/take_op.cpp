// SPDX-License-Identifier: Apache-2.0
#include "queues/take_op.hpp"

#include <cstdio>
#include <functional>

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"
#include "exec/retry_policy.hpp"
#include "queues/take_fsm.hpp"

namespace relock::detail::queues {
namespace {

using steady = std::chrono::steady_clock;
using step = take_fsm::step;
using ending = take_fsm::ending;

// Error replies that say Redis is moving or not ready, not that the take is wrong: the
// executor's list (retry_policy), and UNBLOCKED, a BLPOP someone else's CLIENT UNBLOCK ... ERROR
// ended, which blocks again.
bool transient_reply(const resp::reply& r) {
  if (r.error_code() == "UNBLOCKED") return true;
  return exec::meaning_of(r.error_code()) != exec::error_meaning::final;
}

std::string seconds_of(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(d.count() / 1000),
                static_cast<long long>(d.count() % 1000));
  return text;
}

// Performs what take_fsm decides.
class take_op : public std::enable_shared_from_this<take_op>, public shutdown_aware {
 public:
  take_op(std::shared_ptr<client_core> core, take_request request, take_callback done)
      : core_(std::move(core)),
        request_(std::move(request)),
        done_(std::move(done)),
        deadline_timer_(core_->io()),
        retry_timer_(core_->io()),
        fsm_(request_.deadline) {}

  void start() {
    started_at_ = request_.asked_at ? *request_.asked_at : steady::now();
    if (core_->stopped()) return act(fsm_.stop(errc::cancelled));
    if (request_.stop.stop_requested()) return act(fsm_.stop(errc::cancelled));
    core_->track(*this);
    tracked_ = true;
    if (request_.stop.stop_possible()) {
      std::weak_ptr<take_op> weak = shared_from_this();
      asio::io_context& io = core_->io();
      stop_callback_.emplace(request_.stop, [weak, &io] {
        asio::post(io, [weak] {
          if (auto self = weak.lock()) self->act(self->fsm_.stop(errc::cancelled));
        });
      });
    }
    if (request_.deadline) {
      deadline_timer_.expires_at(*request_.deadline);
      deadline_timer_.async_wait([self = shared_from_this()](std::error_code ec) {
        if (!ec) self->act(self->fsm_.deadline_passed(steady::now()));
      });
    }
    act(fsm_.start(steady::now()));
  }

 private:
  void on_shutdown() override { act(fsm_.stop(errc::cancelled)); }

  void act(const take_fsm::action& a) {
    switch (a.what) {
      case step::none:
        return;
      case step::send:
        return send(a.block_for);
      case step::retry:
        retry_timer_.expires_after(a.delay);
        retry_timer_.async_wait([self = shared_from_this()](std::error_code ec) {
          if (!ec) self->act(self->fsm_.retry_due(steady::now()));
        });
        return;
      case step::finish:
        return finish(a);
      case step::unblock:
        unblock();
        return finish(a);
      case step::give_back:
        return give_back();
    }
  }

  void send(std::chrono::milliseconds block_for) {
    // Routed afresh each time: a master that moved, or a slot that did, is followed.
    const net::endpoint to = core_->executor().route(request_.key).target();
    if (connection_ && connection_->target().address() != to.address()) {
      core_->blocking().give_back(std::exchange(connection_, nullptr));
    }
    if (!connection_) connection_ = core_->blocking().lease(to);
    if (!connection_) return act(fsm_.failed(errc::cancelled, false, steady::now()));
    // The connection's id, for CLIENT UNBLOCK: asked with every BLPOP (a reconnect changes it).
    client_id_.reset();
    connection_->send(resp::request{"CLIENT", "ID"}, steady::time_point::max(),
                      [self = shared_from_this()](std::error_code ec, net::reply_span replies) {
                        if (ec || replies.empty() || replies.front().is_error()) return;
                        self->client_id_ = std::to_string(replies.front().integer);
                        if (self->unblock_wanted_) self->unblock();
                      });
    // No deadline on the request itself: a reply that came after one would be read by nobody,
    // and could carry an element. The take's own timers end the wait.
    connection_->send(resp::request{"BLPOP", request_.key, seconds_of(block_for)},
                      steady::time_point::max(),
                      [self = shared_from_this()](std::error_code ec, net::reply_span replies) {
                        self->on_reply(ec, replies);
                      });
  }

  void on_reply(std::error_code ec, net::reply_span replies) {
    const auto now = steady::now();
    unblock_wanted_ = false;
    if (ec) {
      last_detail_ = replies.empty() ? ec.message() : replies.front().str;
      const bool transient = ec == errc::connection || ec == errc::timeout;
      act(fsm_.failed(ec, transient, now));
    } else if (replies.empty()) {
      act(fsm_.failed(errc::server_error, false, now));
    } else if (const auto& r = replies.front(); r.is_error()) {
      last_detail_ = r.str;
      core_->executor().learn_redirect(r, connection_->target().host);
      if (transient_reply(r)) {
        core_->blocking().give_back(std::exchange(connection_, nullptr));  // lease anew
        act(fsm_.failed(errc::connection, true, now));
      } else {
        act(fsm_.failed(exec::classify(r), false, now));
      }
    } else if (r.is_nil() || r.elements.size() < 2) {
      act(fsm_.got_nil(now));
    } else {
      element_ = std::move(r.elements[1].str);
      act(fsm_.got_element());
    }
    if (fsm_.finished() && !fsm_.blocking() && connection_) {
      core_->blocking().give_back(std::exchange(connection_, nullptr));
    }
  }

  // The take is over with a BLPOP still out: have the server answer it now (with nil, unless
  // it already popped an element, which give_back returns to the list).
  void unblock() {
    if (!client_id_) {
      unblock_wanted_ = true;  // when CLIENT ID answers
      return;
    }
    unblock_wanted_ = false;
    core_->executor().run(request_.key, resp::request{"CLIENT", "UNBLOCK", *client_id_},
                          [](std::error_code, resp::reply) {});
  }

  void give_back() {
    core_->log(log_level::warning, "a take that had ended got an element from '" + request_.key +
                                       "'; it goes back to the head of the list");
    core_->executor().run(request_.key, resp::request{"LPUSH", request_.key, std::move(element_)},
                          [core = core_, key = request_.key](std::error_code ec, resp::reply r) {
                            if (ec) {
                              core->log(log_level::error,
                                        "an element taken from '" + key +
                                            "' after its take ended could not be put back: " +
                                            (r.str.empty() ? ec.message() : r.str));
                            }
                          });
  }

  void finish(const take_fsm::action& a) {
    const auto self = shared_from_this();
    if (tracked_) core_->untrack(*this);
    tracked_ = false;
    deadline_timer_.cancel();
    retry_timer_.cancel();
    stop_callback_.reset();
    if (!fsm_.blocking() && connection_) {
      core_->blocking().give_back(std::exchange(connection_, nullptr));
    }
    if (!done_) return;
    observed(a);
    switch (a.why) {
      case ending::got:
        return std::exchange(done_, {})(std::error_code{}, std::string(), std::move(element_));
      case ending::timed_out:
        return std::exchange(done_, {})(std::error_code{}, std::string(), std::nullopt);
      case ending::failed:
        return std::exchange(done_, {})(a.ec ? a.ec : make_error_code(errc::cancelled),
                                        std::move(last_detail_), std::nullopt);
      case ending::cancelled:
        return std::exchange(done_, {})(make_error_code(errc::cancelled), "cancelled",
                                        std::nullopt);
    }
  }

  // Tells the client's observer, if it has one, how this take ended.
  void observed(const take_fsm::action& a) const {
    auto* o = core_->settings().observer.get();
    if (o == nullptr) return;
    queue_outcome outcome = queue_outcome::failed;
    std::error_code ec = a.ec;
    switch (a.why) {
      case ending::got:
        outcome = queue_outcome::done;
        break;
      case ending::timed_out:
        outcome = queue_outcome::empty;
        break;
      case ending::failed:
        if (!ec) ec = make_error_code(errc::cancelled);
        break;
      case ending::cancelled:
        outcome = queue_outcome::cancelled;
        ec = make_error_code(errc::cancelled);
        break;
    }
    o->on_queue({.operation = queue_operation::take,
                 .key = request_.key,
                 .outcome = outcome,
                 .error = ec,
                 .waited = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() -
                                                                                 started_at_),
                 .elements = a.why == ending::got ? 1 : 0});
  }

  std::shared_ptr<client_core> core_;
  take_request request_;
  take_callback done_;
  asio::steady_timer deadline_timer_;
  asio::steady_timer retry_timer_;
  take_fsm fsm_;
  std::shared_ptr<net::connection> connection_;
  std::optional<std::string> client_id_;
  bool unblock_wanted_ = false;
  std::string element_;
  std::string last_detail_;
  bool tracked_ = false;
  steady::time_point started_at_{};  // the observer's wait
  std::optional<std::stop_callback<std::function<void()>>> stop_callback_;
};

}  // namespace

void start_take(std::shared_ptr<client_core> core, take_request request, take_callback done) {
  auto* c = core.get();
  c->enter([core = std::move(core), request = std::move(request),
            done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, "the client has been destroyed", std::nullopt);
    std::make_shared<take_op>(std::move(core), std::move(request), std::move(done))->start();
  });
}

}  // namespace relock::detail::queues
