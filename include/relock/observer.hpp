// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::observer: what a client does, as typed events, for metrics and traces.
///
/// Set config::observer to an object derived from relock::observer and override the calls you
/// want; the others do nothing. Every call is made on relock's I/O thread, once the work it
/// reports has finished: keep it short (count, record in a histogram, hand off to a queue) and
/// never block or call relock synchronously from it. With no observer set, relock tests one
/// pointer per event and builds nothing.
///
/// Names are unbounded (a lock per order id, a UUID in the name): an event carries the key, and a
/// metric should label by a bounded value derived from it (the kind, or a prefix), never the key.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace relock {

/// How an acquire ended.
enum class acquire_outcome {
  acquired,      ///< the hold (or the permit, or the open latch) is the caller's
  not_acquired,  ///< the wait ran out with it held elsewhere; Redis answered throughout
  failed,        ///< an error: see acquire_event::error
  cancelled,     ///< a stop token, Asio's cancellation, or the client's destruction
};

/// An acquire that finished: a lock's, a lock set member's, a semaphore's, a latch's await.
struct acquire_event {
  std::string_view kind;  ///< what was acquired, in words: "lock", "fair lock", "semaphore"...
  std::string_view key;   ///< the Redis key (after the name mapper)
  acquire_outcome outcome = acquire_outcome::failed;  ///< how it ended
  std::error_code error;                              ///< why, when it failed or was cancelled
  std::chrono::microseconds waited{0};  ///< from the call to the end, tries and waits included
  std::int64_t tries = 0;               ///< acquire scripts sent (1 when it was free)
};

/// A release (unlock) that finished.
struct release_event {
  std::string_view kind;  ///< "lock", "fair lock", "semaphore"...
  std::string_view key;   ///< the Redis key
  std::error_code error;  ///< none, or not_owner, lock_lost, connection...
  /// How long this client held it, from the outermost acquire's sending to the release's; zero
  /// when relock recorded no hold (a semaphore's permits, a release by another process's id).
  std::chrono::microseconds held{0};
};

/// One renewal call of the watchdog, for `holds` holds that share a slot.
struct renewal_event {
  std::size_t holds = 0;                 ///< holds it renewed (or tried to)
  std::error_code error;                 ///< none, or why the call failed (it is tried again)
  std::chrono::microseconds latency{0};  ///< from sending to the reply
};

/// A hold this client lost, as config::on_lock_lost hears it.
struct loss_event {
  std::string_view key;    ///< the Redis key
  std::string_view owner;  ///< the hash field that held it
  /// errc::lock_lost (found gone) or errc::renewal_failed (no renewal got through in time).
  std::error_code reason;
};

/// Hears a client's work (config::observer). Every call runs on relock's I/O thread.
class observer {
 public:
  virtual ~observer() = default;
  /// An acquire finished, however it ended.
  virtual void on_acquire(const acquire_event&) {}
  /// A release finished.
  virtual void on_release(const release_event&) {}
  /// A watchdog renewal call got its reply, or failed.
  virtual void on_renewal(const renewal_event&) {}
  /// A hold was lost.
  virtual void on_loss(const loss_event&) {}
};

}  // namespace relock
