// SPDX-License-Identifier: Apache-2.0
/// relock::permit_expirable_semaphore: Redisson's RPermitExpirableSemaphore in C++, on the same
/// data (docs/data-layout.md §7): the name holds the available permits, {name}:timeout the
/// permits taken (each a 16-byte random id, shown as 32 hex chars) scored by when they expire,
/// and releases publish the new count on redisson_sc:{name}. Every script first takes back the
/// permits whose time ran out, whoever holds them, so Java and C++ share permits and leases.
///
/// Permits. acquire and try_acquire hand the permit to a relock::permit, which gives it back
/// when it goes out of scope (an exception's way out included); permit::id() is its id, and
/// permit::detach() keeps it taken and returns the id, for a holder elsewhere (another process,
/// Java) to give back with release(id). The calls that return a permit are [[nodiscard]]: a
/// permit dropped at once is given back at once (before 1.0 they returned the id, and the permit
/// stayed taken).
///
/// Leases. A permit acquired with a lease expires then. Beyond Redisson: one acquired without a
/// lease is renewed by the client's watchdog (config::watchdog_lease, renewed every third of it)
/// while its client lives, and comes back a lease after the client dies, so a crashed holder
/// never keeps a permit for good (Redisson's permits without a lease never expire:
/// redisson/redisson#2045, #4462). A permit the watchdog finds gone, or cannot renew in time, is
/// lost: permit_options::on_lost and config::on_lock_lost hear of it, and its release reports
/// errc::lock_lost.
///
/// Waiting is the semaphore's (semaphore.hpp): by message, a permit per woken waiter, looking
/// again at least when the earliest permit expires, and every second. Acquiring from a name that
/// holds nothing fails with errc::not_initialized unless semaphore_options::wait_when_absent.
///
/// A cheap handle; it must not outlive its client. Thread-safe. Misuse: an empty or oversized
/// name throws errc::invalid_argument when the handle is made; a permit id that is not 32 hex
/// chars, a lease or wait that is negative or absurd, a count below 0 throw it before any I/O
/// (except try_acquire_for and try_acquire_until, which take a wait of zero or less as one
/// attempt, as std::counting_semaphore does). Blocking calls on relock's own I/O thread (inside
/// a completion handler) throw errc::would_deadlock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/durations.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>
#include <relock/permit.hpp>
#include <relock/semaphore.hpp>

namespace relock {

/// How async_acquire takes a permit.
struct permit_options {
  /// How long the permit lives. Empty: the watchdog lease, renewed while this client lives.
  std::optional<std::chrono::milliseconds> lease{};
  /// How long to wait for a permit. Empty: async_acquire waits for ever.
  std::optional<std::chrono::milliseconds> wait{};
  /// Ends the wait with errc::cancelled when requested.
  std::stop_token stop{};
  /// Called on relock's I/O thread if the permit is lost (errc::lock_lost, errc::renewal_failed).
  std::function<void(std::error_code)> on_lost{};
};

/// A semaphore whose permits have ids and leases, shared with Redisson's
/// RPermitExpirableSemaphore.
class RELOCK_API permit_expirable_semaphore {
 public:
  /// The name the handle was made with.
  const std::string& name() const { return name_; }
  /// The name after the client's name_mapper: the key in Redis.
  const std::string& key() const { return key_; }

  // --- Blocking (throw relock::error on failure) ---

  /// Waits for a permit and takes it, for the permit returned; errc::cancelled on a stop
  /// request. Empty `lease`: renewed by the watchdog while this client lives.
  [[nodiscard]] permit acquire(std::optional<std::chrono::milliseconds> lease = {},
                               std::stop_token stop = {});
  /// A permit if one is free now (wait zero: one attempt), or within `wait`; nullopt when none
  /// came.
  [[nodiscard]] std::optional<permit> try_acquire(
      std::chrono::milliseconds wait = {}, std::optional<std::chrono::milliseconds> lease = {},
      std::stop_token stop = {});
  /// A permit within `wait`, as std::counting_semaphore::try_acquire_for: a wait of zero or
  /// less is one attempt. Any std::chrono duration; rounded up to whole milliseconds.
  template <class Rep, class Period>
  [[nodiscard]] std::optional<permit> try_acquire_for(
      const std::chrono::duration<Rep, Period>& wait,
      std::optional<std::chrono::milliseconds> lease = {}, std::stop_token stop = {}) {
    const auto w =
        wait <= wait.zero() ? std::chrono::milliseconds(0) : detail::to_millis(wait, "wait");
    return try_acquire(w, lease, std::move(stop));
  }
  /// A permit before `until` (any clock; measured on the steady clock from the call); a time
  /// already past is one attempt.
  template <class Clock, class Duration>
  [[nodiscard]] std::optional<permit> try_acquire_until(
      const std::chrono::time_point<Clock, Duration>& until,
      std::optional<std::chrono::milliseconds> lease = {}, std::stop_token stop = {}) {
    return try_acquire_for(until - Clock::now(), lease, std::move(stop));
  }

  // --- Permits by id: taken elsewhere (another process, Java) or detached ---

  /// Gives the permit back. errc::not_owner when no such permit is held, errc::lock_lost when
  /// this client held it and it expired or was taken back.
  void release(std::string_view permit_id);
  /// The same, false instead of an error when the permit is not held.
  bool try_release(std::string_view permit_id);
  /// The permit now expires `lease` from now (the watchdog stops renewing it); false when no
  /// such permit is held.
  bool update_lease(std::string_view permit_id, std::chrono::milliseconds lease);

  // --- Administration ---

  /// The permits available now.
  std::int64_t available_permits() const;
  /// The permits held and not expired, by every client.
  std::int64_t acquired_permits() const;
  /// Makes available + acquired equal `permits` (Redisson 4.x setPermits): the available count
  /// moves by the difference.
  void set_permits(std::int64_t permits);
  /// Sets the available count only when the name holds nothing.
  bool try_set_permits(std::int64_t permits);
  /// Adds `permits` (may be negative) to the available count; creates it when absent.
  void add_permits(std::int64_t permits);

  // --- Async: any completion token; the handler runs on relock's I/O thread unless it has an
  // executor of its own ---

  /// void(std::error_code, std::optional<permit>): waits as options.wait says (empty: for
  /// ever); nullopt when the wait ran out. Ends with errc::cancelled on options.stop or a
  /// cancellation of the handler's Asio cancellation slot, leaving no permit taken. A permit
  /// the handler lets go on relock's I/O thread is given back without waiting (permit.hpp).
  template <class Token>
  auto async_acquire(permit_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::optional<permit>)>(
        [self = *this](auto handler, permit_options opts) mutable {
          auto c = detail::erase_cancellable<std::optional<permit>>(std::move(handler), self.io(),
                                                                    std::move(opts.stop));
          opts.stop = std::move(c.stop);
          self.start_acquire(std::move(opts), std::move(c.done));
        },
        token, std::move(options));
  }
  /// void(std::error_code): gives back the permit `permit_id`; not_owner, lock_lost as release.
  /// (An owned relock::permit has its own async_release.)
  template <class Token>
  auto async_release(std::string permit_id, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, std::string id) mutable {
          self.start_release(std::move(id), detail::erase<>(std::move(handler), self.io()));
        },
        token, std::move(permit_id));
  }

 private:
  friend class client;                                // makes every handle
  friend struct detail::synchronizers::permit_state;  // a permit gives itself back through the
                                                      // handle
  permit_expirable_semaphore(std::shared_ptr<detail::client_core> core, std::string name,
                             semaphore_options options = {});

  using acquire_done = detail::answer<std::optional<permit>>;
  // (error, words for a human: the server's text or what was not held)
  using release_done = detail::answer<>;
  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_acquire(permit_options options, acquire_done done);
  void start_release(std::string permit_id, release_done done);
  // The permit's id, or nullopt when the wait ran out.
  std::optional<std::string> acquire_blocking(permit_options options);

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
  std::string channel_;
  semaphore_options options_;
};

}  // namespace relock
