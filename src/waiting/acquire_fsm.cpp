// SPDX-License-Identifier: Apache-2.0
#include "waiting/acquire_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail::waiting {

acquire_fsm::action acquire_fsm::start(bool behind_waiters, time_point now, bool listening) {
  if (phase_ != phase::idle) return {};
  if (!wait_ || backoff_ || !(behind_waiters || listening)) return try_now();
  // Join first: behind this client's waiters, to sleep until its turn; or on a channel already
  // confirmed, so the try that follows at once is heard after and needs no second one.
  behind_ = behind_waiters;
  behind_since_ = now;
  queued_ = true;
  phase_ = phase::subscribing;
  return with_timer({.what = step::subscribe, .until = deadline_});
}

acquire_fsm::action acquire_fsm::try_now() {
  phase_ = phase::trying;
  tried_ = true;
  behind_ = false;
  ++timer_;  // a timer asked for before this try no longer counts
  return {.what = step::send_try};
}

acquire_fsm::action acquire_fsm::with_timer(action a) {
  a.timer = ++timer_;
  return a;
}

acquire_fsm::action acquire_fsm::finish(ending why, std::error_code ec) {
  phase_ = phase::done;
  ++timer_;
  return {.what = step::finish,
          .why = why,
          .ec = ec,
          .give_up = tried_ && wait_ && why != ending::acquired};
}

acquire_fsm::action acquire_fsm::sleep_for(duration d, time_point now) {
  phase_ = phase::sleeping;
  time_point until = now + d;
  if (deadline_) until = std::min(until, *deadline_);
  return with_timer({.what = step::sleep, .until = until});
}

// Up to half of `d`, from a splitmix64 sequence.
std::chrono::microseconds acquire_fsm::next_jitter(duration d) {
  std::uint64_t z = (jitter_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const auto span = static_cast<std::uint64_t>(std::chrono::microseconds(d).count() / 2);
  return std::chrono::microseconds(span == 0 ? 0 : static_cast<std::int64_t>(z % (span + 1)));
}

acquire_fsm::action acquire_fsm::acquired() {
  if (phase_ != phase::trying) return {};
  outage_ = unsynced_ = false;
  if (shutting_down_) {
    // Nobody will hear of this hold: it goes back before the caller hears cancelled.
    action a = finish(ending::shutdown, errc::cancelled);
    a.give_back = true;
    a.give_up = false;  // it holds: there is no place in a queue to give up
    return a;
  }
  // A cancel that came while the try was in flight loses to it: the hold is reported.
  return finish(ending::acquired);
}

acquire_fsm::action acquire_fsm::refused(duration holder_ttl, time_point now) {
  if (phase_ != phase::trying) return {};
  outage_ = unsynced_ = false;
  if (shutting_down_) return finish(ending::shutdown, errc::cancelled);
  if (cancel_requested_) return finish(ending::cancelled, errc::cancelled);
  if (!wait_ || deadline_passed(now)) return finish(ending::not_acquired);
  // A TTL of 0 is the holder's last millisecond: the key is gone by the next try.
  if (holder_ttl.count() == 0 && (queued_ || backoff_)) return try_now();
  if (backoff_) {
    const duration d = next_backoff_;
    next_backoff_ = std::min(next_backoff_ * 2, backoff_->max);
    time_point until = now + d + next_jitter(d);
    // The holder's key is gone after its TTL: no use sleeping longer.
    if (holder_ttl.count() > 0) until = std::min(until, now + holder_ttl);
    phase_ = phase::sleeping;
    if (deadline_) until = std::min(until, *deadline_);
    return with_timer({.what = step::sleep, .until = until});
  }
  if (!queued_) {
    // Subscribe, wait for the confirmation, then try again: a release between the first try and
    // the subscription would otherwise go unheard.
    queued_ = true;
    phase_ = phase::subscribing;
    return with_timer({.what = step::subscribe, .until = deadline_});
  }
  duration d = holder_ttl.count() > 0 ? holder_ttl : no_ttl_recheck;
  // Without messages a wait looks again every no_ttl_recheck: nothing would tell it otherwise.
  if (!listening_) d = std::min(d, no_ttl_recheck);
  return sleep_for(d, now);
}

// Ride through an outage: the connection reconnects, the subscriber resubscribes; try again
// while the deadline lasts.
acquire_fsm::action acquire_fsm::outage_seen(time_point now) {
  if (deadline_passed(now)) return finish(ending::outage, errc::connection);
  outage_ = true;
  return sleep_for(retry_after_outage, now);
}

// A try whose reply never came may still have run: what it may have taken goes back, unless its
// kind's tries change nothing or the owner held the key before (the take-back would undo that
// older hold; the try could only have counted it up).
acquire_fsm::action acquire_fsm::failed(std::error_code ec, bool outage, time_point now,
                                        bool owner_holds) {
  if (phase_ != phase::trying) return {};
  // A connection closed under the try at shutdown leaves it unknown too.
  const bool unknown = outage || (shutting_down_ && ec == errc::cancelled);
  action a;
  if (shutting_down_) {
    a = finish(ending::shutdown, errc::cancelled);
  } else if (outage && wait_ && !cancel_requested_) {
    a = outage_seen(now);
  } else {
    a = finish(outage ? ending::outage : ending::failed, ec);
  }
  a.take_back = unknown && tries_take_ && !owner_holds;
  return a;
}

acquire_fsm::action acquire_fsm::unsynced(unsigned attempts, time_point now, bool granted) {
  if (phase_ != phase::trying) return {};
  outage_ = false;
  unsynced_attempts_ = attempts;
  // The grant goes back before anything else happens: before a caller that hears
  // no_synced_replicas looks, and before the next try.
  if (granted) {
    phase_ = phase::rolling_back;
    return {.what = step::roll_back};
  }
  return after_unsynced(now);
}

acquire_fsm::action acquire_fsm::rolled_back(time_point now) {
  if (phase_ != phase::rolling_back) return {};
  return after_unsynced(now);
}

acquire_fsm::action acquire_fsm::after_unsynced(time_point now) {
  if (shutting_down_) return finish(ending::shutdown, errc::cancelled);
  if (cancel_requested_) return finish(ending::cancelled, errc::cancelled);
  // A wait with a deadline rides through, as through an outage: during a failover the old
  // master grants what no replica acknowledges until the client has moved. A single try, or a
  // wait for ever, stops after `attempts`.
  ++unsynced_tries_;
  const bool over =
      wait_ && deadline_ ? deadline_passed(now) : unsynced_tries_ >= unsynced_attempts_;
  if (over) return finish(ending::failed, errc::no_synced_replicas);
  unsynced_ = true;
  return sleep_for(retry_after_outage, now);
}

acquire_fsm::action acquire_fsm::take_backs_booked(std::size_t copies) {
  if (phase_ != phase::trying || copies == 0) return {};
  phase_ = phase::settling;
  copies_out_ = copies;
  copy_failure_ = {};
  return with_timer({.what = step::settle, .until = deadline_});
}

acquire_fsm::action acquire_fsm::take_back_answered(std::error_code ec, bool ran, time_point now) {
  if (phase_ != phase::settling) return {};
  // A copy that did not run (no answer, or refused for now) holds the try back, as an outage
  // does, and the take-back goes again before the next one. Only a copy cut short by the
  // client's own shutdown says nothing of Redis.
  if (!ran && ec != errc::cancelled && !copy_failure_) {
    copy_failure_ = ec == errc::connection ? ec : make_error_code(errc::timeout);
  }
  if (--copies_out_ > 0) return {};
  return settled(copy_failure_, now);
}

acquire_fsm::action acquire_fsm::settled(std::error_code ec, time_point now) {
  // No try went out: nothing to take back, nothing of this wait's to give up beyond what the
  // tries before left.
  if (shutting_down_) return finish(ending::shutdown, errc::cancelled);
  if (cancel_requested_) return finish(ending::cancelled, errc::cancelled);
  if (!ec) return try_now();
  if (!wait_) return finish(ending::outage, ec);
  return outage_seen(now);
}

acquire_fsm::action acquire_fsm::subscribed(bool listening) {
  if (phase_ != phase::subscribing) return {};
  listening_ = listening;
  if (!behind_ || !listening) return try_now();
  // Its turn comes with a release's message; a lost one costs no_ttl_recheck at most.
  return sleep_for(no_ttl_recheck, behind_since_);
}

acquire_fsm::action acquire_fsm::woken() {
  if (phase_ != phase::sleeping) return {};
  return try_now();
}

acquire_fsm::action acquire_fsm::timer_fired(unsigned id, time_point now) {
  if (id != timer_) return {};
  return timer(now);
}

acquire_fsm::action acquire_fsm::timer(time_point now) {
  if (phase_ == phase::settling) {
    // Redis stayed away for the whole wait: the take-backs are still unanswered.
    return deadline_passed(now) ? finish(ending::outage, errc::connection) : action{};
  }
  if (phase_ == phase::subscribing) {
    // The subscription is not confirmed by the deadline: the wait is over, after one look if
    // it has not tried yet.
    if (!deadline_passed(now)) return {};
    return behind_ ? try_now() : finish(ending::not_acquired);
  }
  if (phase_ != phase::sleeping) return {};
  if (cancel_requested_) return finish(ending::cancelled, errc::cancelled);
  if (deadline_passed(now)) {
    // A waiter by backoff hears of no release: its last sleep was cut short by the deadline, so
    // it looks once more (as Redisson's spin lock does). Its refusal then ends the wait.
    if (backoff_ && !outage_ && !looked_at_deadline_) {
      looked_at_deadline_ = true;
      return try_now();
    }
    // Queued behind this client's waiters, it has not looked yet: it does, once.
    if (behind_) return try_now();
    // A wait that ends while Redis is still away (or its replicas) says so, not "not acquired".
    if (outage_) return finish(ending::outage, errc::connection);
    if (unsynced_) return finish(ending::failed, errc::no_synced_replicas);
    return finish(ending::not_acquired);
  }
  return try_now();
}

acquire_fsm::action acquire_fsm::cancel() {
  if (phase_ == phase::done) return {};
  cancel_requested_ = true;
  // While a try is under way its reply decides, and a rollback must be answered first (the
  // caller hears of no hold that may still be on the server). Take-backs being sent again are
  // no try.
  if (phase_ == phase::trying || phase_ == phase::rolling_back) return {};
  return finish(ending::cancelled, errc::cancelled);
}

acquire_fsm::action acquire_fsm::shutdown() {
  if (phase_ == phase::done) return {};
  shutting_down_ = cancel_requested_ = true;
  if (phase_ == phase::trying || phase_ == phase::rolling_back) return {};
  return finish(ending::shutdown, errc::cancelled);
}

}  // namespace relock::detail::waiting
