// SPDX-License-Identifier: Apache-2.0
/// relock::semaphore: Redisson's RSemaphore in C++, on the same data (docs/data-layout.md §7): the
/// name is a string holding the number of available permits, and every release publishes the new
/// count on redisson_sc:{name}, so Java and C++ acquirers share the permits and wake each other.
/// It reads like std::counting_semaphore (acquire, try_acquire, try_acquire_for,
/// try_acquire_until, release), with counts of more than one permit and a stop token besides.
///
/// Permits have no owner and no lease: whoever acquired them (or anyone else) gives them back
/// with release, and a holder that dies keeps them for ever. acquire_permits and
/// try_acquire_permits hand them to a relock::permit that gives them back when it goes out of
/// scope, an exception's way out included. For permits that come back when their holder dies,
/// use permit_expirable_semaphore.
///
/// Waiting: a waiter listens on the channel and tries again when a release says enough permits
/// may be free for it. A message carrying a count of c wakes local waiters in order while their
/// demands fit in c (a waiter for 3 permits is not woken by a count of 2, and a count of 4 wakes
/// both a waiter for 3 and one for 1), so a release of n permits wakes at most n waiters' worth,
/// and a waiter for several permits is not left sleeping while they are free
/// (redisson/redisson#6664). A waiter also looks again every second, so a lost message costs at
/// most that (redisson/redisson#5762).
///
/// A semaphore that was never set up: acquiring from a name that holds nothing fails with
/// errc::not_initialized, unless the handle was made with semaphore_options::wait_when_absent
/// (then it waits, as Redisson does, for someone to add permits; redisson/redisson#4401).
///
/// A cheap handle (client + name); it must not outlive its client. Thread-safe. Misuse: an empty
/// name or one over 64 KiB throws errc::invalid_argument when the handle is made; a permit count
/// below 1 or over max() (or, for add_permits, of absurd size), or a negative or absurd wait,
/// throws it before any I/O (except try_acquire_for and try_acquire_until, which take a wait of
/// zero or less as one attempt, as std::counting_semaphore does). A name that holds anything but
/// an integer string gives errc::wrong_type, changing nothing. Blocking calls on relock's own
/// I/O thread (inside a completion handler) throw errc::would_deadlock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/core_access.hpp>
#include <relock/detail/durations.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>
#include <relock/permit.hpp>

namespace relock {

namespace detail::synchronizers {
struct permit_state;  // what a relock::permit owns (src/synchronizers/permit.cpp)
}

/// How a semaphore handle behaves (client::semaphore, client::permit_expirable_semaphore).
struct semaphore_options {
  /// Acquiring from a name that holds nothing waits (as for 0 permits) instead of failing with
  /// errc::not_initialized.
  bool wait_when_absent = false;
};

/// A counting semaphore in Redis, shared with Redisson's RSemaphore.
class RELOCK_API semaphore {
 public:
  /// The name the handle was made with.
  const std::string& name() const { return name_; }
  /// The name after the client's name_mapper: the key in Redis.
  const std::string& key() const { return key_; }

  /// The most permits one call takes or gives back: Java's largest int, as Redisson.
  static constexpr std::int64_t max() noexcept { return 2147483647; }

  // --- Blocking, as std::counting_semaphore (throw relock::error on failure) ---

  /// Waits until `permits` are available and takes them; errc::cancelled on a stop request.
  void acquire(std::int64_t permits = 1, std::stop_token stop = {});
  /// Takes `permits` if they are available now (one attempt).
  bool try_acquire(std::int64_t permits = 1);
  /// Takes one permit, waiting up to `wait` for it; false when the wait ran out. A wait of zero
  /// or less is one attempt, as std::counting_semaphore's. Any std::chrono duration; rounded up
  /// to whole milliseconds.
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop = {}) {
    if (wait <= wait.zero()) return try_acquire();
    return try_acquire(1, detail::to_millis(wait, "wait"), std::move(stop));
  }
  /// Takes one permit, waiting until `until` (any clock) for it; false when it passed. A time
  /// already past is one attempt. The wait is measured on the steady clock from the call, so a
  /// later jump of `Clock` does not move it.
  template <class Clock, class Duration>
  bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& until,
                         std::stop_token stop = {}) {
    return try_acquire_for(until - Clock::now(), std::move(stop));
  }
  /// Takes `permits`, waiting up to `wait` for them (zero: one attempt); false when the wait ran
  /// out.
  bool try_acquire(std::int64_t permits, std::chrono::milliseconds wait, std::stop_token stop = {});
  /// Gives `permits` back (adds them) and wakes waiters. Never resent twice: a release whose reply
  /// was lost is resent under a latch (data-layout §1), so it counts once.
  void release(std::int64_t permits = 1);

  // --- Blocking, owned: the permits go back when the relock::permit goes out of scope ---

  /// Waits until `permits` are available and takes them, for the permit returned;
  /// errc::cancelled on a stop request.
  [[nodiscard]] permit acquire_permits(std::int64_t permits = 1, std::stop_token stop = {});
  /// Takes `permits`, waiting up to `wait` for them (zero: one attempt); nullopt when the wait
  /// ran out.
  [[nodiscard]] std::optional<permit> try_acquire_permits(std::int64_t permits = 1,
                                                          std::chrono::milliseconds wait = {},
                                                          std::stop_token stop = {});

  // --- Administration ---

  /// The permits available now (0 when the name holds nothing).
  std::int64_t available_permits() const;
  /// Takes every available permit; returns how many (0, changing nothing, when the count is at
  /// or below 0: Redisson would set a negative count to 0).
  std::int64_t drain_permits();
  /// Sets the count to `permits` only when the name holds nothing; false (changing nothing) when
  /// it already holds a count, even 0 (redisson/redisson#4678).
  bool try_set_permits(std::int64_t permits);
  /// Adds `permits`, which may be negative (the count may go below zero); creates the semaphore
  /// when absent.
  void add_permits(std::int64_t permits);

  // --- Async: any completion token; the handler runs on relock's I/O thread unless it has an
  // executor of its own ---

  /// void(std::error_code, bool acquired): waits up to `wait` (empty: for ever; zero: tries
  /// once). Ends with errc::cancelled on a stop request or a cancellation of the handler's Asio
  /// cancellation slot, leaving no permit taken.
  template <class Token>
  auto async_acquire(std::int64_t permits, std::optional<std::chrono::milliseconds> wait,
                     std::stop_token stop, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, bool)>(
        [self = *this](auto handler, std::int64_t n, std::optional<std::chrono::milliseconds> w,
                       std::stop_token s) mutable {
          auto c = detail::erase_cancellable<bool>(std::move(handler), self.io(), std::move(s));
          self.start_acquire(n, w, std::move(c.stop), std::move(c.done));
        },
        token, permits, wait, std::move(stop));
  }
  /// void(std::error_code): gives `permits` back, as release.
  template <class Token>
  auto async_release(std::int64_t permits, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, std::int64_t n) mutable {
          self.start_release(n, detail::erase<>(std::move(handler), self.io()));
        },
        token, permits);
  }

 private:
  friend class client;                                // makes every handle
  friend struct detail::synchronizers::permit_state;  // a permit gives its permits back through the
                                                      // handle
  semaphore(std::shared_ptr<detail::client_core> core, std::string name,
            semaphore_options options = {});

  using acquire_done = detail::answer<bool>;
  // (error, words for a human: the server's text or what was not held)
  using release_done = detail::answer<>;
  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_acquire(std::int64_t permits, std::optional<std::chrono::milliseconds> wait,
                     std::stop_token stop, acquire_done done);
  void start_release(std::int64_t permits, release_done done);
  bool acquire_blocking(std::int64_t permits, std::optional<std::chrono::milliseconds> wait,
                        std::stop_token stop);

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
  std::string channel_;
  semaphore_options options_;
};

}  // namespace relock
