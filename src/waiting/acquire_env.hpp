// SPDX-License-Identifier: Apache-2.0
// What one acquire needs of its client, and nothing more: send a script call or a release, join
// and leave a channel's waiters, record a hold, hand a latch to the sweeper, book take-backs, a
// timer and a clock. acquire_op drives acquire_fsm against it; the library gives it the client's
// own (core_acquire_env.hpp), and tests a fake one, with no server and a clock of their own.
//
// One per operation (it owns the operation's timer); I/O thread only, except post().
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <relock/config.hpp>
#include <relock/detail/unique_function.hpp>

#include "exec/executor.hpp"
#include "pubsub/waiter_queue.hpp"
#include "renewal/watchdog.hpp"
#include "waiting/lock_kind.hpp"
#include "waiting/release_op.hpp"
#include "waiting/take_back_book.hpp"

namespace relock::detail {
class shutdown_aware;  // an operation the client ends at shutdown (src/client_core.hpp)
}

namespace relock::detail::waiting {

class acquire_env {
 public:
  using clock = std::chrono::steady_clock;

  virtual ~acquire_env() = default;

  // The client.
  virtual const config& settings() const = 0;
  virtual const std::string& publish_command() const = 0;
  virtual queue_timing queue_timing_now() const = 0;
  virtual bool stopped() const = 0;
  // Tells `op` (on_shutdown) when the client shuts down, until untracked.
  virtual void track(shutdown_aware& op) = 0;
  virtual void untrack(shutdown_aware& op) = 0;
  virtual void log(log_level level, std::string_view text) const = 0;
  // Any thread: runs `fn` on the I/O thread.
  virtual void post(unique_function<void()> fn) = 0;

  // Sending.
  virtual void eval(const exec::script& s, script_call call, exec::result_callback done,
                    exec::eval_options options) = 0;
  // A release (release_now): even while the client shuts down.
  virtual void release(release_request request, release_callback done) = 0;

  // Waiting.
  // `linger`: how long `channel` stays subscribed after its last waiter left (waiter_queues).
  virtual void join(const std::string& channel, pubsub::wake_count wakes, pubsub::waiter& w,
                    pubsub::waiter_queues::ready_callback ready,
                    std::chrono::milliseconds linger) = 0;
  virtual void leave(pubsub::waiter& w, bool used_wake) = 0;
  // A permit left by a message nobody used (a semaphore's): `w` takes it.
  virtual bool take_permit(const pubsub::waiter& w) = 0;
  // Whether this client has waiters queued on `channel` now.
  virtual bool has_waiters(const std::string& channel) const = 0;
  // Whether this client listens on `channel` already: subscribed and confirmed, with waiters or
  // lingering without.
  virtual bool listening(const std::string& channel) const = 0;
  virtual clock::time_point now() const = 0;
  // One timer: arming it again replaces what it was armed for.
  virtual void arm_timer(clock::time_point at, unique_function<void()> fired) = 0;
  virtual void cancel_timer() = 0;

  // Holds.
  virtual bool holds(const std::string& key, const std::string& field) const = 0;
  virtual void record_hold(renewal::watchdog::grant grant) = 0;
  virtual take_back_book& take_backs() = 0;
  // A latch whose work is done: the sweeper deletes it.
  virtual void discard_latch(std::string latch) = 0;
};

}  // namespace relock::detail::waiting
