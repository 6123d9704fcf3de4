// SPDX-License-Identifier: Apache-2.0
#include "objects/acquire_op.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>

#include "client_core.hpp"
#include "objects/acquire_fsm.hpp"
#include "objects/ids.hpp"
#include "objects/naming.hpp"
#include "objects/release_op.hpp"
#include "objects/take_back_book.hpp"

namespace relock::detail {
namespace {

using steady = std::chrono::steady_clock;
using step = acquire_fsm::step;
using ending = acquire_fsm::ending;

bool outage(std::error_code ec) { return ec == errc::timeout || ec == errc::connection; }

// A spinning kind's waiters back off as the client's settings say, with jitter from a seed of
// their own, so spinners that started together do not retry together.
std::optional<acquire_fsm::backoff> backoff_of(const client_core& core, const lock_kind& kind) {
  if (!kind.spins) return std::nullopt;
  const backoff& b = core.settings().spin_backoff;
  return acquire_fsm::backoff{b.initial, b.max, objects::random_seed()};
}

// Performs what acquire_fsm decides: the script call, the waiter queue, the timer, the
// watchdog record and the cleanup releases. The decisions themselves live in the machine.
class acquire_op : public std::enable_shared_from_this<acquire_op>, public shutdown_aware {
 public:
  acquire_op(std::shared_ptr<client_core> core, acquire_request request, acquire_callback done)
      : core_(std::move(core)),
        request_(std::move(request)),
        done_(std::move(done)),
        timer_(core_->io()),
        fsm_(request_.wait, request_.deadline, backoff_of(*core_, *request_.kind)) {
    waiter_.demand = static_cast<std::size_t>(request_.permits);
    waiter_.wake = [this] {
      // Try at once, not from the cancelled timer's handler: that would queue the try behind
      // whatever else this pass of the I/O loop has to do.
      if (fsm_.sleeping()) act(fsm_.woken());
    };
  }

  void start() {
    if (core_->stopped()) return act(fsm_.shutdown());
    if (request_.stop.stop_requested()) return act(fsm_.cancel());
    core_->track(*this);
    tracked_ = true;
    if (request_.stop.stop_possible()) {
      std::weak_ptr<acquire_op> weak = shared_from_this();
      asio::io_context& io = core_->io();
      stop_callback_.emplace(request_.stop, [weak, &io] {
        asio::post(io, [weak] {
          if (auto self = weak.lock()) self->act(self->fsm_.cancel());
        });
      });
    }
    act(fsm_.start());
  }

 private:
  void on_shutdown() override { act(fsm_.shutdown()); }

  void act(acquire_fsm::action a) {
    if (a.take_back) release_if_taken_unseen();
    if (a.give_back) give_back("giving back at shutdown the hold on");
    if (a.give_up) give_up();
    switch (a.what) {
      case step::none:
        return;
      case step::send_try:
        return send_try();
      case step::subscribe:
        return subscribe(a.until);
      case step::settle:
        return settle(a.until);
      case step::sleep:
        // A wake that came while the try was out, or a message nobody heard: try at once.
        if (waiter_.signalled || core_->waiters().take_permit(waiter_)) return act(fsm_.woken());
        return arm_timer(a.until);
      case step::finish:
        return finish(a);
    }
  }

  void send_try() {
    ++timer_generation_;  // a timer armed before this try no longer counts
    timer_.cancel();
    // A take-back of this owner on this key (from this acquire or an earlier one) that no answer
    // has confirmed yet may still land after this try, and release what the try grants. Each
    // goes again first, under its latch, to wherever the key lives now; the try waits for them.
    if (!request_.kind->ownerless && core_->take_backs().has(request_.key, request_.owner)) {
      return act(fsm_.take_backs_booked());
    }
    try_unanswered_ = true;
    waiter_.signalled = false;  // a wake from now on means: something changed, try again
    sent_at_ = steady::now();   // the hold's validity counts from here: the script runs later
    const lock_kind& kind = *request_.kind;
    // Every try that can be taken back has a latch of its own: an ownerless kind's try writes
    // it when it grants, an owner's take-back writes it, and the try reads it (lock_kind.hpp).
    if (kind.take_back != nullptr || !kind.ownerless) {
      try_latch_ = objects::unlock_latch_key(request_.key, objects::random_request_id());
    }
    auto call = kind.acquire_call(acquire_context{
        request_.key, request_.owner, request_.lease, request_.wait, core_->publish_command(),
        queue_timing_of(*core_), request_.permits, try_latch_, core_->settings().unlock_latch_ttl});
    core_->executor().eval(request_.kind->acquire, std::move(call.keys), std::move(call.args),
                           [self = shared_from_this()](std::error_code ec, resp::reply r) {
                             self->on_reply(ec, std::move(r));
                           });
  }

  void on_reply(std::error_code ec, resp::reply r) {
    const auto now = steady::now();
    if (!outage(ec)) try_unanswered_ = false;  // the server's answer says what the try did
    if (ec == errc::no_synced_replicas) {
      // Written, but no replica has it (or the master refused it: NOREPLICAS): a failover could
      // take back what it granted, so a grant goes back before anything else is tried. A
      // refusal granted nothing: it stands as it is.
      const bool granted = !r.is_error() && request_.kind->read_acquire(r).result ==
                                                acquire_reply::outcome::acquired;
      if (granted || r.is_error()) {
        last_detail_ = r.is_error()
                           ? r.str
                           : "no replica acknowledged the lock write within " +
                                 std::to_string(core_->settings().replica_sync_timeout.count()) +
                                 " ms (" + std::to_string(core_->settings().replica_sync_attempts) +
                                 " tries)";
        if (!granted) return act(fsm_.unsynced(core_->settings().replica_sync_attempts, now));
        // The grant is gone before anything else happens: before a caller that hears
        // no_synced_replicas looks, and before the next try.
        return give_back("rolling back an unsynced acquire of", [self = shared_from_this()] {
          self->act(
              self->fsm_.unsynced(self->core_->settings().replica_sync_attempts, steady::now()));
        });
      }
      ec = {};
    }
    // A failure for want of Redis may come with the connection's words as an error reply; only
    // the server's own answers go to the kind.
    if (ec && (outage(ec) || !r.is_error())) {
      last_detail_ = r.str;
      return act(fsm_.failed(ec, outage(ec), now));
    }
    auto read = request_.kind->read_acquire(r);
    switch (read.result) {
      case acquire_reply::outcome::acquired:
        token_ = std::move(read.token);
        holds_ = read.holds;
        // The grant is known: its try latch has done its work, unless the client is shutting
        // down and the grant goes back under it.
        if (request_.kind->take_back != nullptr && !core_->stopped()) {
          core_->sweeper().discard(try_latch_);
        }
        return act(fsm_.acquired());
      case acquire_reply::outcome::refused:
        return act(fsm_.refused(read.holder_ttl, now));
      case acquire_reply::outcome::failed:
        last_detail_ = r.is_error() ? r.str : "unexpected reply " + resp::to_string(r);
        return act(fsm_.failed(read.ec ? read.ec : ec, false, now));
    }
  }

  void subscribe(std::optional<steady::time_point> until) {
    queued_ = true;
    arm_timer(until);
    core_->waiters().join(request_.waiter_channel, request_.kind->wakes, waiter_,
                          [self = shared_from_this()](std::error_code ec) {
                            if (ec && !self->fsm_.done()) {
                              self->core_->log(log_level::warning,
                                               "waiting on '" + self->request_.key +
                                                   "' without messages: " + ec.message());
                            }
                            self->act(self->fsm_.subscribed(!ec));
                          });
  }

  void arm_timer(std::optional<steady::time_point> until) {
    const unsigned generation = ++timer_generation_;
    if (!until) return;  // subscribing with no deadline: the confirmation moves on
    timer_.expires_at(*until);
    timer_.async_wait([self = shared_from_this(), generation](std::error_code) {
      // A timer cancelled or replaced since (a wake, a confirmation, a new try) does nothing.
      if (generation != self->timer_generation_) return;
      self->act(self->fsm_.timer(steady::now()));
    });
  }

  // A try whose reply never came may still have run. If this owner held nothing before (or the
  // kind's grants have no owner), undo whatever it may have taken, so nothing leaks; the undo is
  // latch-protected, so it is harmless when the try did not run.
  // An owner's take-back is booked until a copy of it is answered: every later try of this
  // owner on this key sends it again first (send_try), so no copy can land after that try.
  // An ownerless kind's take-back returns only what its own try took, whenever it lands.
  void release_if_taken_unseen() {
    const lock_kind& kind = *request_.kind;
    if (kind.ownerless && kind.take_back == nullptr) return;  // a try that changes nothing
    if (!kind.ownerless && core_->watchdog().held_by(request_.key, request_.field)) return;
    if (!std::exchange(try_unanswered_, false)) return;  // no try since the last take-back
    if (kind.ownerless) {
      return undo_try([core = core_, key = request_.key](std::error_code ec, std::string) {
        if (!ec) log_taken_back(*core, key);
      });
    }
    release_request take_back{request_.key,  request_.channel, request_.owner,  request_.field,
                              request_.kind, /*cleanup=*/true, request_.permits};
    take_back.take_back = true;
    take_back.latch = try_latch_;
    core_->take_backs().add(owner_on_key(), take_back);
    send_take_back(core_, owner_on_key(), std::move(take_back), [](std::error_code, bool) {});
  }

  take_back_book::id owner_on_key() const { return {request_.key, request_.owner}; }

  static void log_taken_back(client_core& core, const std::string& key) {
    core.log(log_level::warning, "released '" + key + "' taken by an acquire whose reply was lost");
  }

  // One copy of a booked take-back; an answer that says the script ran, whatever it found,
  // means a copy has left its latch: the take-back leaves the book. `then` hears whether one
  // did (a refusal such as BUSY, or no answer, is none).
  static void send_take_back(const std::shared_ptr<client_core>& core, take_back_book::id who,
                             release_request take_back,
                             std::function<void(std::error_code, bool)> then) {
    std::string latch = take_back.latch;
    release_now(core, std::move(take_back),
                [core, who = std::move(who), latch = std::move(latch), then = std::move(then)](
                    std::error_code ec, std::string detail) {
                  const bool ran = !release_not_run(ec, detail) && ec != errc::cancelled;
                  if (ran) core->take_backs().answered(who, latch);
                  if (!ec) log_taken_back(*core, who.first);
                  then(ec, ran);
                });
  }

  // A copy of each booked take-back goes now; the machine hears once all are answered. Each
  // copy waits at most a command timeout, so one queued for a node that died does not hold the
  // try back for the take-back's whole window.
  void settle(std::optional<steady::time_point> until) {
    arm_timer(until);
    auto take_backs = core_->take_backs().pending(owner_on_key());
    const unsigned round = ++settle_round_;
    settling_ = take_backs.size();
    settle_failure_ = {};
    for (auto& take_back : take_backs) {
      take_back.timeout = core_->settings().command_timeout;
      send_take_back(core_, owner_on_key(), std::move(take_back),
                     [self = shared_from_this(), round](std::error_code ec, bool ran) {
                       if (round != self->settle_round_) return;  // a round the op left
                       // Not run (no answer, or refused for now): the try waits, as after an
                       // outage, and the take-back goes again before the next one.
                       if (!ran && ec != errc::cancelled && !self->settle_failure_) {
                         self->settle_failure_ = outage(ec) ? ec : make_error_code(errc::timeout);
                       }
                       if (--self->settling_ > 0) return;
                       ++self->settle_round_;
                       if (self->settle_failure_) {
                         self->last_detail_ = "taking back an earlier lost try failed: " +
                                              self->settle_failure_.message();
                       }
                       self->act(self->fsm_.settled(self->settle_failure_, steady::now()));
                     });
    }
  }

  // One hold goes back (a re-entry only counts down), under a latch of its own: the try
  // acquired while the client shuts down (nobody will hear of the hold), or no replica
  // acknowledged it.
  // `then` runs once the release has been answered.
  void give_back(const char* doing, std::function<void()> then = {}) {
    undo_try([core = core_, key = request_.key, doing, then = std::move(then)](std::error_code ec,
                                                                               std::string detail) {
      if (ec && ec != errc::no_synced_replicas && ec != errc::cancelled) {
        core->log(log_level::warning, std::string(doing) + " '" + key + "' failed: " + detail);
      }
      if (then) then();
    });
  }

  // Undoes what the last try may have granted: an owner's hold goes back through the release
  // path (one hold; harmless when the try did not take it); an ownerless grant through the
  // kind's take-back under the try's latch (nothing when the try did not grant, and a try that
  // arrives later grants nothing). Both are latch-protected, so a resend changes nothing twice.
  void undo_try(release_callback done) {
    const lock_kind& kind = *request_.kind;
    if (!kind.ownerless) {
      return release_now(core_,
                         release_request{request_.key, request_.channel, request_.owner,
                                         request_.field, request_.kind,
                                         /*cleanup=*/true, request_.permits},
                         std::move(done));
    }
    const auto& settings = core_->settings();
    auto call =
        kind.take_back_call(take_back_context{request_.key, request_.channel, try_latch_,
                                              core_->publish_command(), settings.unlock_latch_ttl});
    core_->executor().eval(
        *kind.take_back, std::move(call.keys), std::move(call.args),
        [done = std::move(done)](std::error_code ec, resp::reply r) mutable {
          if (ec) return done(ec, r.str);
          // 0: the try had granted nothing, and now never will.
          if (r.integer != 1) return done(errc::not_owner, "the try had granted nothing");
          done({}, {});
        },
        {.idempotent = true, .timeout = settings.unlock_latch_ttl, .synced = false});
  }

  // The wait ends without the hold: the kind cleans what its tries left (a place in a queue).
  // Sent before the caller hears, so a try that follows runs after it (a key's requests keep
  // their order). Under a latch of its own, so a resend after a lost connection changes nothing
  // twice.
  void give_up() {
    const lock_kind& kind = *request_.kind;
    if (kind.give_up == nullptr) return;
    const auto& settings = core_->settings();
    std::string latch = objects::unlock_latch_key(request_.key, objects::random_request_id());
    auto call = kind.give_up_call(give_up_context{
        request_.key, request_.owner, request_.channel, latch, core_->publish_command(),
        settings.unlock_latch_ttl, queue_timing_of(*core_)});
    core_->executor().eval(
        *kind.give_up, std::move(call.keys), std::move(call.args),
        [core = core_, key = request_.key, latch](std::error_code ec, resp::reply r) mutable {
          if (ec) {
            core->log(log_level::warning, "giving up the wait on '" + key + "' failed: " + r.str);
            return;
          }
          core->sweeper().discard(std::move(latch));
        },
        {.idempotent = true, .timeout = settings.unlock_latch_ttl});
  }

  void finish(const acquire_fsm::action& a) {
    // Leaving the waiter queue may drop the last reference to this op (the subscription's
    // callback holds one): keep it alive to the end.
    const auto self = shared_from_this();
    const bool acquired = a.why == ending::acquired;
    if (acquired && !request_.kind->ownerless) {
      // Recorded before the caller hears of it, so the watchdog never misses a renewal.
      core_->watchdog().held({.key = request_.key,
                              .field = request_.field,
                              .owner = request_.owner,
                              .lease = request_.lease,
                              .renew = request_.watchdog ? &request_.kind->renew : nullptr,
                              .on_lost = std::move(request_.on_lost),
                              .sent_at = sent_at_,
                              .listen_on = request_.listen_for_loss ? request_.channel : "",
                              .token = token_,
                              .holds = holds_});
    }
    if (tracked_) core_->untrack(*this);
    tracked_ = false;
    if (queued_) core_->waiters().leave(waiter_, acquired);
    queued_ = false;
    ++timer_generation_;
    ++settle_round_;  // take-back copies still out no longer lead to a try
    timer_.cancel();
    stop_callback_.reset();
    std::string detail;
    switch (a.why) {
      case ending::acquired:
      case ending::not_acquired:
        break;
      case ending::failed:
      case ending::outage:
        detail = last_detail_;
        break;
      case ending::cancelled:
        detail = "cancelled";
        break;
      case ending::shutdown:
        detail = "the client has been destroyed";
        break;
    }
    if (a.ec && detail.empty()) detail = a.ec.message();
    std::exchange(done_, {})(a.ec, acquire_result{acquired, std::move(token_), std::move(detail)});
  }

  std::shared_ptr<client_core> core_;
  acquire_request request_;
  acquire_callback done_;
  asio::steady_timer timer_;
  unsigned timer_generation_ = 0;
  pubsub::waiter waiter_;
  acquire_fsm fsm_;
  bool queued_ = false;
  bool tracked_ = false;
  std::string last_detail_;       // the server's or the connection's words on the last failed try
  std::string token_;             // what the acquiring reply handed out (a kind with tokens)
  std::int64_t holds_ = 0;        // the owner's holds after it, when the kind's reply says
  steady::time_point sent_at_{};  // when the last try went out
  unsigned settle_round_ = 0;     // bumps when a wait for take-backs ends: older answers do nothing
  std::size_t settling_ = 0;      // take-back copies the next try still waits for
  std::error_code settle_failure_;  // the first of them that failed for want of Redis
  bool try_unanswered_ = false;     // a try went out and no take-back has covered it since
  std::string try_latch_;           // the last try's latch (lock_kind.hpp, acquire_context)
  std::optional<std::stop_callback<std::function<void()>>> stop_callback_;
};

}  // namespace

void start_acquire(std::shared_ptr<client_core> core, acquire_request request,
                   acquire_callback done) {
  client_core& door = *core;
  door.enter([core = std::move(core), request = std::move(request),
              done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, {.detail = "the client has been destroyed"});
    std::make_shared<acquire_op>(std::move(core), std::move(request), std::move(done))->start();
  });
}

}  // namespace relock::detail
