// SPDX-License-Identifier: Apache-2.0
/// \file
/// How one acquire of a lock (relock::mutex, a lock set) waits, how long its hold lives, and who
/// hears that it was lost. Every field has a default: `{}` is "wait for ever, watchdog lease".
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <system_error>

namespace relock {

/// \copydoc lock_options.hpp
struct lock_options {
  /// How long the hold lives. Empty: the watchdog lease, renewed while held.
  std::optional<std::chrono::milliseconds> lease{};
  /// How long to wait for the lock. Empty: async_lock waits for ever, async_try_lock does not
  /// wait at all.
  std::optional<std::chrono::milliseconds> wait{};
  /// Ends the wait early with errc::cancelled (Java's lockInterruptibly).
  std::stop_token stop{};
  /// Called on relock's I/O thread if this hold is lost, with errc::lock_lost (found gone) or
  /// errc::renewal_failed (no renewal reached Redis before the hold's validity deadline).
  std::function<void(std::error_code)> on_lost{};
  /// While held, also listen on the lock's channel and check the hold on every message there: a
  /// hold taken away (force_unlock, by any client, Java's too) reaches on_lost within a round
  /// trip, not at the next renewal (up to a third of the lease later). Costs one subscription
  /// per held lock; the relock CLI's `run` uses it. Not for a spin lock, whose force unlock
  /// publishes nothing (relock's nor Redisson's), nor for Redisson's force unlock of a fair lock,
  /// which tells only the head waiter: those reach on_lost at the next renewal.
  bool listen_for_loss = false;
};

}  // namespace relock
