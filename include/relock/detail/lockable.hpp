// SPDX-License-Identifier: Apache-2.0
/// \file
/// The acquire surface every lock shares (relock::mutex and the lock sets), written once: the
/// standard's Lockable and TimedLockable calls for the calling thread, relock's lease and
/// stop-token forms, and async_lock / async_try_lock. `Self` provides the private calls that do
/// the work, and befriends this class: acquire_blocking(owner, lock_options, bool
/// empty_wait_is_forever) and start_acquire(owner, lock_options, bool, done), whose results have
/// `.acquired`, and io(), the context its handlers default to.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <system_error>
#include <utility>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/durations.hpp>
#include <relock/errors.hpp>
#include <relock/lock_options.hpp>
#include <relock/owner.hpp>

namespace relock::detail {

/// \copydoc detail/lockable.hpp
template <class Self>
class lockable {
 public:
  /// Waits for ever; the watchdog lease. Throws relock::error on failure.
  void lock() { acquire({}, {}, {}, true); }
  /// Waits for ever; the hold lives `lease` (never renewed).
  void lock(std::chrono::milliseconds lease) { acquire({}, lease, {}, true); }
  /// Ends with errc::cancelled when `stop` is requested first; the watchdog lease (or `lease`).
  void lock(std::stop_token stop, std::optional<std::chrono::milliseconds> lease = {}) {
    acquire({}, lease, std::move(stop), true);
  }
  /// One attempt; true when acquired.
  bool try_lock() { return acquire({}, {}, {}, false); }
  /// Waits at most `wait`; true when acquired.
  bool try_lock(std::chrono::milliseconds wait) { return acquire(wait, {}, {}, false); }
  /// Waits at most `wait`; the hold lives `lease` (never renewed).
  bool try_lock(std::chrono::milliseconds wait, std::chrono::milliseconds lease) {
    return acquire(wait, lease, {}, false);
  }
  /// Waits at most `wait`, of any duration type; zero or less tries once (TimedLockable).
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    // As std::timed_mutex: a wait that is zero or less tries once.
    if (wait <= wait.zero()) return try_lock();
    return try_lock(to_millis(wait, "wait"));
  }
  /// Waits until `until`, on any clock (TimedLockable).
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& until) {
    return try_lock_for(until - Clock::now());
  }

  /// void(std::error_code): acquired, or an error (not_acquired when options.wait ran out;
  /// options.wait empty: waits for ever).
  template <class Token>
  auto async_lock(owner o, lock_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = static_cast<const Self&>(*this)](auto handler, owner who,
                                                 lock_options opts) mutable {
          auto c = erase_cancellable<>(std::move(handler), self.io(), std::move(opts.stop));
          opts.stop = std::move(c.stop);
          self.start_acquire(who, std::move(opts), true,
                             [done = std::move(c.done)](std::error_code ec, const auto& r) mutable {
                               if (!ec && !r.acquired) ec = errc::not_acquired;
                               done(ec, r.detail);
                             });
        },
        token, o, std::move(options));
  }
  /// void(std::error_code, bool acquired): waits at most options.wait (no wait when empty).
  template <class Token>
  auto async_try_lock(owner o, lock_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, bool)>(
        [self = static_cast<const Self&>(*this)](auto handler, owner who,
                                                 lock_options opts) mutable {
          auto c = erase_cancellable<bool>(std::move(handler), self.io(), std::move(opts.stop));
          opts.stop = std::move(c.stop);
          self.start_acquire(who, std::move(opts), false,
                             [done = std::move(c.done)](std::error_code ec, const auto& r) mutable {
                               done(ec, r.detail, r.acquired);
                             });
        },
        token, o, std::move(options));
  }

 private:
  bool acquire(std::optional<std::chrono::milliseconds> wait,
               std::optional<std::chrono::milliseconds> lease, std::stop_token stop,
               bool empty_wait_is_forever) {
    lock_options o;
    if (wait) o.wait = to_millis(*wait, "wait");
    if (lease) o.lease = to_millis(*lease, "lease");
    o.stop = std::move(stop);
    return static_cast<Self&>(*this)
        .acquire_blocking(owner::current_thread(), std::move(o), empty_wait_is_forever)
        .acquired;
  }
};

}  // namespace relock::detail
