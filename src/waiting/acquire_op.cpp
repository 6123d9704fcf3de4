// SPDX-License-Identifier: Apache-2.0
#include "waiting/acquire_op.hpp"

#include <vector>

#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"  // shutdown_aware, and the door start_acquire goes through
#include "containers/block_cache.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "waiting/acquire_env.hpp"
#include "waiting/acquire_fsm.hpp"
#include "waiting/core_acquire_env.hpp"
#include "waiting/release_op.hpp"
#include "waiting/take_back_book.hpp"

namespace relock::detail::waiting {
namespace {

using steady = std::chrono::steady_clock;
using step = acquire_fsm::step;
using ending = acquire_fsm::ending;

bool outage(std::error_code ec) { return ec == errc::timeout || ec == errc::connection; }

// An owner's own channel (a fair lock's waiter's) stays subscribed this long after its wait
// ends: the same owner waiting again soon finds it listening and tries once, with no new
// subscription (acquire_fsm::start). Only the queue's head is told there, and an owner that
// does not wait is not queued, so a lingering channel costs a subscription, not messages.
constexpr std::chrono::milliseconds own_channel_linger{1'000};

// The waiters of a kind that does not listen (a spin lock) back off as the client's settings
// say, with jitter from a seed of their own, so spinners that started together do not retry
// together.
std::optional<acquire_fsm::backoff> backoff_of(const config& settings, const grant_kind& kind) {
  if (kind.wakes != nullptr) return std::nullopt;
  const backoff& b = settings.spin_backoff;
  return acquire_fsm::backoff{b.initial, b.max, layout::random_seed()};
}

// Performs what acquire_fsm decides, against acquire_env: the script call, the waiter queue,
// the timer, the watchdog record and the cleanup releases. It reads replies into the machine's
// events; every decision is the machine's.
class acquire_op : public std::enable_shared_from_this<acquire_op>, public shutdown_aware {
 public:
  acquire_op(std::shared_ptr<acquire_env> env, acquire_request request, acquire_callback done)
      : env_(std::move(env)),
        request_(std::move(request)),
        done_(std::move(done)),
        fsm_(request_.wait, request_.deadline, backoff_of(env_->settings(), *request_.grant),
             /*tries_take=*/request_.hold != nullptr || request_.grant->take_back != nullptr) {
    waiter_.demand = static_cast<std::size_t>(request_.permits);
    waiter_.wake = [this] {
      // Try at once, not from the cancelled timer's handler: that would queue the try behind
      // whatever else this pass of the I/O loop has to do.
      if (fsm_.sleeping()) act(fsm_.woken());
    };
  }

  void start() {
    started_at_ = request_.asked_at ? *request_.asked_at : env_->now();
    if (auto* o = env_->settings().observer.get()) {
      o->on_acquire_start({.kind = kind_name(), .key = request_.key});
    }
    if (env_->stopped()) return act(fsm_.shutdown());
    if (request_.stop.stop_requested()) return act(fsm_.cancel());
    env_->track(*this);
    tracked_ = true;
    if (request_.stop.stop_possible()) {
      std::weak_ptr<acquire_op> weak = shared_from_this();
      stop_callback_.emplace(request_.stop, [weak, env = env_] {
        env->post([weak] {
          if (auto self = weak.lock()) self->act(self->fsm_.cancel());
        });
      });
    }
    act(fsm_.start(behind_own_waiters(), env_->now(),
                   request_.wait && env_->listening(request_.listens_on())));
  }

 private:
  void on_shutdown() override { act(fsm_.shutdown()); }

  // Threads of this client already wait for this lock: a new wait goes behind them rather than
  // take the lock from under the one a release just woke (acquire_fsm::start). Not a re-entry:
  // the owner that holds the lock would wait for its own release.
  bool behind_own_waiters() const {
    if (!request_.grant->queues_behind_own_waiters || !request_.wait) return false;
    if (request_.hold != nullptr && env_->holds(request_.key, request_.field)) return false;
    return env_->has_waiters(request_.listens_on());
  }

  void act(acquire_fsm::action a) {
    if (a.take_back) take_back();
    if (a.give_back) give_back("giving back at shutdown the hold on");
    if (a.give_up) give_up();
    switch (a.what) {
      case step::none:
        return;
      case step::send_try:
        return send_try();
      case step::subscribe:
        return subscribe(a);
      case step::settle:
        arm_timer(a);
        return settle();
      case step::sleep:
        // A wake that came while the try was out, or a message nobody heard: try at once.
        if (waiter_.signalled || env_->take_permit(waiter_)) return act(fsm_.woken());
        return arm_timer(a);
      case step::roll_back:
        return give_back("rolling back an unsynced acquire of", [self = shared_from_this()] {
          self->act(self->fsm_.rolled_back(self->env_->now()));
        });
      case step::finish:
        return finish(a);
    }
  }

  void send_try() {
    env_->cancel_timer();
    // A take-back of this owner on this key (from this acquire or an earlier one) that no answer
    // has confirmed yet may still land after this try, and release what the try grants: the
    // machine has them sent again first (docs/faults.md, the same-owner race).
    if (request_.hold != nullptr && env_->take_backs().has(request_.key, request_.owner)) {
      copies_ = env_->take_backs().pending(owner_on_key());
      return act(fsm_.take_backs_booked(copies_.size()));
    }
    waiter_.signalled = false;  // a wake from now on means: something changed, try again
    sent_at_ = env_->now();     // the hold's validity counts from here: the script runs later
    const grant_kind& kind = *request_.grant;
    // Every try that can be taken back has a latch of its own: an ownerless kind's try writes
    // it when it grants, an owner's take-back writes it, and the try reads it (lock_kind.hpp).
    if (kind.take_back != nullptr || request_.hold != nullptr) {
      try_latch_ = layout::random_unlock_latch_key(request_.key);
    }
    ++tries_;
    env_->eval(kind.acquire,
               kind.acquire_call(acquire_context{request_.key, request_.owner, request_.lease,
                                                 request_.wait, env_->publish_command(),
                                                 env_->queue_timing_now(), request_.permits,
                                                 try_latch_, env_->settings().unlock_latch_ttl}),
               [self = shared_from_this()](std::error_code ec, resp::reply r) {
                 self->on_reply(ec, std::move(r));
               },
               {});
  }

  // The reply, read by the kind, as one of the machine's events.
  void on_reply(std::error_code ec, resp::reply r) {
    const auto now = env_->now();
    const grant_kind& kind = *request_.grant;
    if (ec == errc::no_synced_replicas) {
      // Written, but no replica has it (or the master refused it: NOREPLICAS): a failover could
      // take back what it granted. A refusal granted nothing: it stands as it is.
      const bool granted =
          !r.is_error() && kind.read_acquire(r).result == acquire_reply::outcome::acquired;
      if (granted || r.is_error()) {
        const config& settings = env_->settings();
        last_detail_ = r.is_error()
                           ? r.str
                           : "no replica acknowledged the lock write within " +
                                 std::to_string(settings.replica_sync_timeout.count()) + " ms (" +
                                 std::to_string(settings.replica_sync_attempts) + " tries)";
        return act(fsm_.unsynced(settings.replica_sync_attempts, now, granted));
      }
      ec = {};
    }
    // A failure for want of Redis may come with the connection's words as an error reply; only
    // the server's own answers go to the kind.
    if (ec && (outage(ec) || !r.is_error())) {
      last_detail_ = r.str;
      const bool owner_holds =
          request_.hold != nullptr && env_->holds(request_.key, request_.field);
      return act(fsm_.failed(ec, outage(ec), now, owner_holds));
    }
    auto read = kind.read_acquire(r);
    switch (read.result) {
      case acquire_reply::outcome::acquired: {
        token_ = std::move(read.token);
        holds_ = read.holds;
        auto a = fsm_.acquired();
        // The grant is known: its try latch has done its work, unless the grant goes back under
        // it (the client is shutting down).
        if (kind.take_back != nullptr && !a.give_back) env_->discard_latch(try_latch_);
        return act(a);
      }
      case acquire_reply::outcome::refused:
        return act(fsm_.refused(read.holder_ttl, now));
      case acquire_reply::outcome::failed:
        last_detail_ = r.is_error() ? r.str : "unexpected reply " + resp::to_string(r);
        return act(fsm_.failed(read.ec ? read.ec : ec, false, now));
    }
  }

  void subscribe(const acquire_fsm::action& a) {
    queued_ = true;
    arm_timer(a);
    env_->join(
        request_.listens_on(), request_.grant->wakes, waiter_,
        [self = shared_from_this()](std::error_code ec) {
          if (ec && !self->fsm_.done()) {
            self->env_->log(log_level::warning, "waiting on '" + self->request_.key +
                                                    "' without messages: " + ec.message());
          }
          self->act(self->fsm_.subscribed(!ec));
        },
        request_.grant->waiter_channel == nullptr ? std::chrono::milliseconds(0)
                                                  : own_channel_linger);
  }

  void arm_timer(const acquire_fsm::action& a) {
    if (!a.until) return env_->cancel_timer();  // subscribing with no deadline
    env_->arm_timer(*a.until, [self = shared_from_this(), id = a.timer] {
      self->act(self->fsm_.timer_fired(id, self->env_->now()));
    });
  }

  // What the last try may have taken goes back; the undo is latch-protected, so it is harmless
  // when the try did not run. An owner's take-back is booked until a copy of it is answered:
  // every later try of this owner on this key sends it again first (send_try), so no copy can
  // land after that try. An ownerless kind's take-back returns only what its own try took,
  // whenever it lands.
  void take_back() {
    if (request_.hold == nullptr) {
      return undo_try([env = env_, key = request_.key](std::error_code ec, std::string) {
        if (!ec) log_taken_back(*env, key);
      });
    }
    release_request take_back{request_.key,  request_.channel, request_.owner,  request_.field,
                              request_.hold, /*cleanup=*/true, request_.permits};
    take_back.take_back = true;
    take_back.latch = try_latch_;
    env_->take_backs().add(owner_on_key(), take_back);
    send_take_back(env_, owner_on_key(), std::move(take_back), [](std::error_code, bool) {});
  }

  take_back_book::id owner_on_key() const { return {request_.key, request_.owner}; }

  static void log_taken_back(const acquire_env& env, const std::string& key) {
    env.log(log_level::warning, "released '" + key + "' taken by an acquire whose reply was lost");
  }

  // One copy of a booked take-back; an answer that says the script ran, whatever it found,
  // means a copy has left its latch: the take-back leaves the book. `then` hears whether one
  // did (a refusal such as BUSY, or no answer, is none).
  static void send_take_back(const std::shared_ptr<acquire_env>& env, take_back_book::id who,
                             release_request take_back,
                             unique_function<void(std::error_code, bool)> then) {
    std::string latch = take_back.latch;
    env->release(std::move(take_back),
                 [env, who = std::move(who), latch = std::move(latch), then = std::move(then)](
                     std::error_code ec, std::string detail) mutable {
                   const bool ran = !release_not_run(ec, detail) && ec != errc::cancelled;
                   if (ran) env->take_backs().answered(who, latch);
                   if (!ec) log_taken_back(*env, who.first);
                   then(ec, ran);
                 });
  }

  // A copy of each booked take-back goes now; the machine hears each answer. Each copy waits at
  // most a command timeout, so one queued for a node that died does not hold the try back for
  // the take-back's whole window.
  void settle() {
    for (auto& copy : std::exchange(copies_, {})) {
      copy.timeout = env_->settings().command_timeout;
      send_take_back(env_, owner_on_key(), std::move(copy),
                     [self = shared_from_this()](std::error_code ec, bool ran) {
                       if (!ran && ec != errc::cancelled && !self->fsm_.done()) {
                         self->last_detail_ =
                             "taking back an earlier lost try failed: " + ec.message();
                       }
                       self->act(self->fsm_.take_back_answered(ec, ran, self->env_->now()));
                     });
    }
  }

  // One hold goes back (a re-entry only counts down), under a latch of its own: the try
  // acquired while the client shuts down (nobody will hear of the hold), or no replica
  // acknowledged it. `then` runs once the release has been answered.
  void give_back(const char* doing, unique_function<void()> then = {}) {
    undo_try([env = env_, key = request_.key, doing, then = std::move(then)](
                 std::error_code ec, std::string detail) mutable {
      if (ec && ec != errc::no_synced_replicas && ec != errc::cancelled) {
        env->log(log_level::warning, std::string(doing) + " '" + key + "' failed: " + detail);
      }
      if (then) then();
    });
  }

  // Undoes what the last try may have granted: an owner's hold goes back through the release
  // path (one hold; harmless when the try did not take it); an ownerless grant through the
  // kind's take-back under the try's latch (nothing when the try did not grant, and a try that
  // arrives later grants nothing). Both are latch-protected, so a resend changes nothing twice.
  // A kind with neither (a latch's await) granted nothing to undo.
  void undo_try(release_callback done) {
    const grant_kind& kind = *request_.grant;
    if (request_.hold != nullptr) {
      return env_->release(release_request{request_.key, request_.channel, request_.owner,
                                           request_.field, request_.hold,
                                           /*cleanup=*/true, request_.permits},
                           std::move(done));
    }
    if (kind.take_back == nullptr) return done({}, {});
    const auto latch_ttl = env_->settings().unlock_latch_ttl;
    env_->eval(*kind.take_back,
               kind.take_back_call(take_back_context{request_.key, request_.channel, try_latch_,
                                                     env_->publish_command(), latch_ttl}),
               [done = std::move(done)](std::error_code ec, resp::reply r) mutable {
                 if (ec) return done(ec, r.str);
                 // 0: the try had granted nothing, and now never will.
                 if (r.integer != 1) return done(errc::not_owner, "the try had granted nothing");
                 done({}, {});
               },
               {.idempotent = true, .timeout = latch_ttl, .synced = false});
  }

  // The wait ends without the hold: the kind cleans what its tries left (a place in a queue).
  // Sent before the caller hears, so a try that follows runs after it (a key's requests keep
  // their order). Under a latch of its own, so a resend after a lost connection changes nothing
  // twice.
  void give_up() {
    const grant_kind& kind = *request_.grant;
    if (kind.give_up == nullptr) return;
    const auto latch_ttl = env_->settings().unlock_latch_ttl;
    std::string latch = layout::random_unlock_latch_key(request_.key);
    env_->eval(*kind.give_up,
               kind.give_up_call(give_up_context{request_.key, request_.owner, request_.channel,
                                                 latch, env_->publish_command(), latch_ttl,
                                                 env_->queue_timing_now()}),
               [env = env_, key = request_.key, latch](std::error_code ec, resp::reply r) mutable {
                 if (ec) {
                   env->log(log_level::warning,
                            "giving up the wait on '" + key + "' failed: " + r.str);
                   return;
                 }
                 env->discard_latch(std::move(latch));
               },
               {.idempotent = true, .timeout = latch_ttl});
  }

  void finish(const acquire_fsm::action& a) {
    // Leaving the waiter queue may drop the last reference to this op (the subscription's
    // callback holds one): keep it alive to the end.
    const auto self = shared_from_this();
    const bool acquired = a.why == ending::acquired;
    if (acquired && request_.hold != nullptr) {
      // Recorded before the caller hears of it, so the watchdog never misses a renewal. The op
      // ends here: the hold takes its owner and field (the observer below reads only the key).
      env_->record_hold({.key = request_.key,
                         .field = std::move(request_.field),
                         .owner = std::move(request_.owner),
                         .lease = request_.lease,
                         .renew = request_.watchdog ? &request_.hold->renew : nullptr,
                         .on_lost = std::move(request_.on_lost),
                         .sent_at = sent_at_,
                         .listen_on = request_.listen_for_loss ? request_.channel : "",
                         .token = token_,
                         .holds = holds_});
    }
    if (tracked_) env_->untrack(*this);
    tracked_ = false;
    if (queued_) env_->leave(waiter_, acquired);
    queued_ = false;
    env_->cancel_timer();
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
    observed(a);
    std::exchange(done_, {})(a.ec, acquire_result{acquired, std::move(token_), std::move(detail)});
  }

  // What the observer's events call the thing acquired.
  std::string_view kind_name() const {
    return request_.hold != nullptr ? request_.hold->what : request_.grant->what_granted;
  }

  // Tells the client's observer, if it has one, how this acquire ended.
  void observed(const acquire_fsm::action& a) const {
    auto* o = env_->settings().observer.get();
    if (o == nullptr) return;
    acquire_outcome outcome = acquire_outcome::failed;
    switch (a.why) {
      case ending::acquired:
        outcome = acquire_outcome::acquired;
        break;
      case ending::not_acquired:
        outcome = acquire_outcome::not_acquired;
        break;
      case ending::cancelled:
      case ending::shutdown:
        outcome = acquire_outcome::cancelled;
        break;
      case ending::failed:
      case ending::outage:
        break;
    }
    o->on_acquire(
        {.kind = kind_name(),
         .key = request_.key,
         .outcome = outcome,
         .error = a.ec,
         .waited = std::chrono::duration_cast<std::chrono::microseconds>(env_->now() - started_at_),
         .tries = tries_});
  }

  std::shared_ptr<acquire_env> env_;
  acquire_request request_;
  acquire_callback done_;
  pubsub::waiter waiter_;
  acquire_fsm fsm_;
  bool queued_ = false;
  bool tracked_ = false;
  std::string last_detail_;       // the server's or the connection's words on the last failed try
  std::string token_;             // what the acquiring reply handed out (a kind with tokens)
  std::int64_t holds_ = 0;        // the owner's holds after it, when the kind's reply says
  steady::time_point sent_at_{};  // when the last try went out
  steady::time_point started_at_{};      // when the caller asked (observer::on_acquire's wait)
  std::int64_t tries_ = 0;               // acquire scripts sent
  std::string try_latch_;                // the last try's latch (lock_kind.hpp, acquire_context)
  std::vector<release_request> copies_;  // booked take-backs the settle step sends again
  std::optional<std::stop_callback<std::function<void()>>> stop_callback_;
};

}  // namespace

void run_acquire(std::shared_ptr<acquire_env> env, acquire_request request, acquire_callback done) {
  containers::make_cached<acquire_op>(std::move(env), std::move(request), std::move(done))->start();
}

void start_acquire(std::shared_ptr<client_core> core, acquire_request request,
                   acquire_callback done) {
  client_core& door = *core;
  door.enter([core = std::move(core), request = std::move(request),
              done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, {.detail = "the client has been destroyed"});
    run_acquire(make_core_acquire_env(std::move(core)), std::move(request), std::move(done));
  });
}

}  // namespace relock::detail::waiting
