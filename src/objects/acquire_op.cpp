#include "objects/acquire_op.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>

#include "client_core.hpp"
#include "objects/release_op.hpp"

namespace relock::detail {
namespace {

using steady = std::chrono::steady_clock;

// How long to sleep when the holder's key has no TTL (a foreign client set none): the wait is
// still bounded, so a lost message costs at most this.
constexpr std::chrono::milliseconds no_ttl_recheck{1'000};

// A waiting acquire whose try failed for want of Redis (connection lost, no reply in time) tries
// again after this, while its deadline lasts. The connection itself reconnects with backoff, and
// a try sent meanwhile waits in its queue; this only keeps failures from spinning.
constexpr std::chrono::milliseconds retry_after_outage{100};

bool outage(std::error_code ec) { return ec == errc::timeout || ec == errc::connection; }

class acquire_op : public std::enable_shared_from_this<acquire_op>, public shutdown_aware {
 public:
  acquire_op(std::shared_ptr<client_core> core, acquire_request request, acquire_callback done)
      : core_(std::move(core)),
        request_(std::move(request)),
        done_(std::move(done)),
        timer_(core_->io()) {
    waiter_.wake = [this] {
      // Try at once, not from the cancelled timer's handler: that would queue the try behind
      // whatever else this pass of the I/O loop has to do.
      if (phase_ != phase::sleeping) return;
      timer_.cancel();
      attempt();
    };
  }

  void start() {
    if (core_->stopped()) return finish(errc::cancelled, false, "the client has been destroyed");
    if (request_.stop.stop_requested()) return finish(errc::cancelled, false, "cancelled");
    core_->track(*this);
    tracked_ = true;
    if (request_.stop.stop_possible()) {
      std::weak_ptr<acquire_op> weak = shared_from_this();
      asio::io_context& io = core_->io();
      stop_callback_.emplace(request_.stop, [weak, &io] {
        asio::post(io, [weak] {
          if (auto self = weak.lock()) self->cancel();
        });
      });
    }
    attempt();
  }

 private:
  enum class phase { trying, subscribing, sleeping, done };

  void attempt() {
    phase_ = phase::trying;
    waiter_.signalled = false;  // a wake from now on means: something changed, try again
    core_->executor().eval(request_.kind->acquire, {request_.key},
                           {std::to_string(request_.lease.count()), request_.field},
                           [self = shared_from_this()](std::error_code ec, resp::reply r) {
                             self->on_reply(ec, std::move(r));
                           });
  }

  void on_reply(std::error_code ec, resp::reply r) {
    if (shutting_down_) return end_for_shutdown(ec, r);
    if (ec) {
      if (outage(ec)) release_if_taken_unseen();
      if (r.error_code() == "NON_REENTRANT_REACQUIRE") ec = errc::non_reentrant;
      // A wait rides through an outage: reconnect (the connection does), resubscribe (the
      // subscriber does), try again; fail only when the deadline finds Redis still away.
      if (outage(ec) && request_.wait && !cancel_requested_) {
        if (deadline_passed()) return finish(errc::connection, false, r.str);
        outage_ = ec;
        outage_detail_ = r.str;
        phase_ = phase::sleeping;
        arm_timer(retry_after_outage);
        return;
      }
      return finish(ec, false, r.str);
    }
    outage_ = {};
    if (r.is_nil()) {
      // Recorded before the caller hears of it, so the watchdog never misses a renewal.
      core_->watchdog().held(request_.key, request_.field, request_.lease,
                             request_.watchdog ? &request_.kind->renew : nullptr,
                             std::move(request_.on_lost),
                             request_.listen_for_loss ? request_.channel : std::string());
      return finish({}, true, {});
    }
    if (cancel_requested_) return finish(errc::cancelled, false, "cancelled");
    if (!request_.wait || deadline_passed()) return finish({}, false, {});
    const std::chrono::milliseconds holder_ttl(r.integer);
    if (!queued_) {
      // Subscribe, wait for the confirmation, then try again: a release between our first try
      // and the subscription would otherwise go unheard.
      queued_ = true;
      phase_ = phase::subscribing;
      arm_timer(std::nullopt);
      core_->waiters().join(
          request_.channel, waiter_, [self = shared_from_this()](std::error_code ec) {
            if (self->phase_ != phase::subscribing) return;
            if (ec) {
              self->core_->log(log_level::warning, "waiting on '" + self->request_.key +
                                                       "' without messages: " + ec.message());
            }
            self->timer_.cancel();
            self->attempt();
          });
      return;
    }
    // A TTL of 0 is the holder's last millisecond: the key is gone by the next try.
    if (waiter_.signalled || core_->waiters().take_permit(waiter_) || holder_ttl.count() == 0) {
      return attempt();
    }
    phase_ = phase::sleeping;
    arm_timer(holder_ttl.count() > 0 ? holder_ttl : no_ttl_recheck);
  }

  // The client is shutting down and this try's reply has come: nobody will hear of a hold, so
  // whatever it may have taken goes back before the caller hears errc::cancelled.
  void end_for_shutdown(std::error_code ec, const resp::reply& r) {
    if (!ec && r.is_nil()) {
      release_now(core_,
                  release_request{request_.key, request_.channel, request_.field, request_.kind,
                                  /*cleanup=*/true},
                  [](std::error_code, std::string) {});
    } else if (ec && (outage(ec) || ec == errc::cancelled)) {
      release_if_taken_unseen();
    }
    finish(errc::cancelled, false, "the client has been destroyed");
  }

  // Sleeps until `for_at_most` (if any) or the caller's deadline, whichever is first.
  void arm_timer(std::optional<std::chrono::milliseconds> for_at_most) {
    auto until = steady::time_point::max();
    if (for_at_most) until = steady::now() + *for_at_most;
    if (request_.deadline) until = std::min(until, *request_.deadline);
    if (until == steady::time_point::max()) return;  // subscribing with no deadline
    timer_.expires_at(until);
    timer_.async_wait([self = shared_from_this()](std::error_code) { self->on_timer(); });
  }

  void on_timer() {
    // A wake or a confirmation cancels the timer and tries at once: that try's reply decides.
    if (phase_ == phase::done || phase_ == phase::trying) return;
    if (cancel_requested_) return finish(errc::cancelled, false, "cancelled");
    if (phase_ == phase::subscribing) {
      if (deadline_passed()) finish({}, false, {});
      return;  // otherwise the confirmation cancelled the timer and has taken over
    }
    if (phase_ != phase::sleeping) return;
    if (deadline_passed() && !waiter_.signalled) {
      // A wait that ends while Redis is still away says so, not "not acquired".
      if (outage_) return finish(errc::connection, false, outage_detail_);
      return finish({}, false, {});
    }
    attempt();
  }

  void cancel() {
    if (phase_ == phase::done) return;
    cancel_requested_ = true;
    // While a try is under way its reply decides: a hold taken is reported, not leaked.
    if (phase_ != phase::trying) finish(errc::cancelled, false, "cancelled");
  }

  void on_shutdown() override {
    if (phase_ == phase::done) return;
    shutting_down_ = true;
    cancel_requested_ = true;
    // A try under way is ended by its reply (or by the connection closing under it).
    if (phase_ != phase::trying) finish(errc::cancelled, false, "the client has been destroyed");
  }

  bool deadline_passed() const { return request_.deadline && steady::now() >= *request_.deadline; }

  // A try whose reply never came may still have run. If this owner held nothing before, release
  // whatever it may have taken, so no hold leaks; the release is latch-protected, so it is
  // harmless when the try did not run.
  void release_if_taken_unseen() {
    if (core_->watchdog().held_by(request_.key, request_.field)) return;
    release_now(core_,
                release_request{request_.key, request_.channel, request_.field, request_.kind,
                                /*cleanup=*/true},
                [core = core_, key = request_.key](std::error_code ec, std::string) {
                  if (!ec) {
                    core->log(log_level::warning,
                              "released '" + key + "' taken by an acquire whose reply was lost");
                  }
                });
  }

  void finish(std::error_code ec, bool acquired, std::string detail) {
    if (phase_ == phase::done) return;
    phase_ = phase::done;
    if (tracked_) core_->untrack(*this);
    tracked_ = false;
    if (queued_) core_->waiters().leave(waiter_, acquired);
    queued_ = false;
    timer_.cancel();
    stop_callback_.reset();
    if (ec && detail.empty()) detail = ec.message();
    std::exchange(done_, {})(ec, acquired, std::move(detail));
  }

  std::shared_ptr<client_core> core_;
  acquire_request request_;
  acquire_callback done_;
  asio::steady_timer timer_;
  pubsub::waiter waiter_;
  phase phase_ = phase::trying;
  bool queued_ = false;
  bool cancel_requested_ = false;
  bool shutting_down_ = false;
  bool tracked_ = false;
  std::error_code outage_;  // the last try failed for want of Redis
  std::string outage_detail_;
  std::optional<std::stop_callback<std::function<void()>>> stop_callback_;
};

}  // namespace

void start_acquire(std::shared_ptr<client_core> core, acquire_request request,
                   acquire_callback done) {
  client_core& door = *core;
  door.enter([core = std::move(core), request = std::move(request),
              done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, false, "the client has been destroyed");
    std::make_shared<acquire_op>(std::move(core), std::move(request), std::move(done))->start();
  });
}

}  // namespace relock::detail
