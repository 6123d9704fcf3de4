// SPDX-License-Identifier: Apache-2.0
// The waiting loop's decisions (data-layout §8), with no I/O and no clock of its own: the
// composed operation around it (acquire_op) feeds it what happened, with the time it happened,
// and does what it answers. Every lock kind waits through this one machine.
//
//   try --refused--> subscribe --confirmed--> try --refused--> sleep --woken/timer--> try ...
//
// A wait on a channel this client already listens on (confirmed: a fair lock's waiter whose own
// channel lingers after its last wait) joins first and then tries: a release after that try is
// heard, so one try is enough before it sleeps.
//
// A wait that starts behind waiters of its own client on the same channel does not try first:
// it joins their queue and sleeps until its turn comes (a message, or no_ttl_recheck at most),
// so a thread that releases and locks again at once does not overtake the threads of its
// process already waiting (the release's message wakes them, in order). A wait that reaches its
// deadline without a try makes one.
//
// It decides: when to try again (a wake, a permit, the holder's TTL, a TTL of 0), how long to
// sleep (the holder's TTL, capped by the caller's deadline; a second when the holder set no TTL;
// or, for a kind that waits by backoff instead of by message, a growing delay),
// when to give up (deadline, cancel, shutdown) and with what error, when a try whose outcome
// is unknown must be taken back, what happens while take-backs of this owner are sent again
// before a try (docs/faults.md, the same-owner race), and that a grant no replica acknowledged
// goes back before anything else. A wait rides through an outage (connection lost, no reply in
// time): it retries while the deadline lasts and ends with errc::connection only when the
// deadline finds Redis still away. While a try is in flight its reply decides, so a hold that
// was taken is reported (or, at shutdown, given back), never leaked. Each timer it asks for has
// an id: one that fires after the machine has moved on does nothing.
//
// Not thread-safe: one operation drives it, on the I/O thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <system_error>

namespace relock::detail::waiting {

class acquire_fsm {
 public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;
  using duration = std::chrono::milliseconds;

  // How long to sleep when the holder's key has no TTL (a foreign client set none): the wait is
  // still bounded, so a lost message costs at most this.
  static constexpr duration no_ttl_recheck{1'000};
  // A waiting acquire whose try failed for want of Redis tries again after this, while its
  // deadline lasts. The connection reconnects with backoff and a try sent meanwhile waits in its
  // queue; this only keeps failures from spinning.
  static constexpr duration retry_after_outage{100};

  // Waiting by backoff (a spin lock): no subscription; after each refusal sleep `initial`,
  // doubling up to `max`, plus a jitter of up to half that drawn from `seed` (so the machine
  // stays deterministic), but never past the holder's TTL or the deadline.
  struct backoff {
    duration initial;
    duration max;
    std::uint64_t seed = 0;
  };

  enum class step {
    none,       // nothing to do (a stale or late event)
    send_try,   // run the kind's acquire script now
    subscribe,  // join the channel's waiters; try again once the subscription is confirmed
    sleep,      // wait for a wake (a pending wake or permit counts at once), or `until`
    settle,     // send each booked take-back again; report each answer (take_back_answered)
    roll_back,  // give back the hold the try was granted; report rolled_back() once answered
    finish,     // complete the operation
  };
  // Why an operation finished, so the op can word its detail.
  enum class ending { acquired, not_acquired, failed, outage, cancelled, shutdown };

  struct action {
    step what = step::none;
    std::optional<time_point> until{};  // subscribe, sleep, settle: when the timer fires
    unsigned timer = 0;                 // with `until`: the id timer_fired() is told
    ending why = ending::acquired;      // finish
    std::error_code ec{};               // finish: the caller's error (none when acquired or not)
    // Before anything else: a try whose reply never came may have run; release what it may have
    // taken (when this owner held nothing before).
    bool take_back = false;
    // The try acquired, but the client is shutting down: give the hold back, then finish.
    bool give_back = false;
    // Finishing without the hold after a try: what the tries may have left on the server (a fair
    // lock's place in the queue) is cleaned up by the kind's give-up, when it has one.
    bool give_up = false;
  };

  // `wait`: false tries once. `deadline`: when a wait ends; none waits for ever. `by_backoff`:
  // wait by backoff instead of by message. `tries_take`: false for a kind whose try changes
  // nothing (nothing to take back when its reply is lost).
  acquire_fsm(bool wait, std::optional<time_point> deadline,
              std::optional<backoff> by_backoff = std::nullopt, bool tries_take = true)
      : wait_(wait), deadline_(deadline), backoff_(by_backoff), tries_take_(tries_take) {
    if (backoff_) {
      next_backoff_ = backoff_->initial;
      jitter_state_ = backoff_->seed;
    }
  }

  // `behind_waiters`: this client already has waiters on the channel this wait would join, and
  // the owner holds nothing here (a re-entry must not wait behind its own hold); `now` then
  // times the first sleep. `listening`: this client's subscription to that channel is already
  // confirmed; the wait joins (step::subscribe, answered at once) and then tries.
  action start(bool behind_waiters = false, time_point now = {}, bool listening = false);
  // The try's reply: acquired, refused with the holder's remaining TTL (-1: none), or an error
  // (`outage`: for want of Redis, the try may or may not have run). `owner_holds`: the owner
  // held the key before the try (a re-entry), so a take-back would undo an older hold.
  action acquired();
  action refused(duration holder_ttl, time_point now);
  action failed(std::error_code ec, bool outage, time_point now, bool owner_holds = false);
  // The try acquired but no replica acknowledged it (`granted`: the hold goes back first, and
  // rolled_back() says when it has), or the master refused the write for want of replicas
  // (NOREPLICAS): try again after retry_after_outage, then fail with errc::no_synced_replicas: a
  // wait with a deadline when it passes, anything else after `attempts` tries in all.
  action unsynced(unsigned attempts, time_point now, bool granted = false);
  action rolled_back(time_point now);
  // The subscription is confirmed (`listening`), or could not be: the wait goes on without
  // messages, looking again at least every no_ttl_recheck.
  action subscribed(bool listening = true);
  // A message (or a permit) says something changed.
  action woken();
  // The timer of the action that said `timer: id` fired; an older one does nothing.
  action timer_fired(unsigned id, time_point now);
  // The last timer asked for fired.
  action timer(time_point now);
  // Instead of the try just asked for: `copies` take-backs of this owner on this key are booked
  // and not answered yet (take_back_book). They go again first; the try waits for them, to
  // `until` at most (the deadline: Redis may stay away for the whole wait).
  action take_backs_booked(std::size_t copies = 1);
  // One copy's answer: `ran` when the server ran it (whatever it found), else `ec` says why not
  // (no answer, or a refusal for now such as BUSY). Once all are in: try now when every copy
  // ran, else ride through as after a try lost in an outage.
  action take_back_answered(std::error_code ec, bool ran, time_point now);
  // The caller's stop_token; the client shutting down.
  action cancel();
  action shutdown();

  bool done() const { return phase_ == phase::done; }
  bool sleeping() const { return phase_ == phase::sleeping; }

 private:
  enum class phase { idle, trying, settling, rolling_back, subscribing, sleeping, done };

  action try_now();
  action finish(ending why, std::error_code ec = {});
  action sleep_for(duration d, time_point now);
  action with_timer(action a);
  action outage_seen(time_point now);
  action settled(std::error_code ec, time_point now);
  action after_unsynced(time_point now);
  std::chrono::microseconds next_jitter(duration d);
  bool deadline_passed(time_point now) const { return deadline_ && now >= *deadline_; }

  bool wait_;
  std::optional<time_point> deadline_;
  std::optional<backoff> backoff_;
  bool tries_take_;
  duration next_backoff_{0};
  std::uint64_t jitter_state_ = 0;
  bool tried_ = false;  // a try was sent: a finish without the hold gives up
  // Queued behind this client's waiters and not tried yet (the first try clears it), since
  // `behind_since_`.
  bool behind_ = false;
  time_point behind_since_{};
  phase phase_ = phase::idle;
  bool queued_ = false;
  bool cancel_requested_ = false;
  bool shutting_down_ = false;
  bool outage_ = false;    // the last try failed for want of Redis
  bool unsynced_ = false;  // the last try was not acknowledged by a replica
  unsigned unsynced_tries_ = 0;
  bool looked_at_deadline_ = false;  // backoff: the last try, made at the deadline
  bool listening_ = true;            // the subscription was confirmed
  unsigned unsynced_attempts_ = 0;   // rolling back: the attempts unsynced() was told
  unsigned timer_ = 0;               // the id of the last timer asked for
  std::size_t copies_out_ = 0;       // settling: take-back copies not answered yet
  std::error_code copy_failure_;     // settling: why the first copy that did not run did not
};

}  // namespace relock::detail::waiting
