// SPDX-License-Identifier: Apache-2.0
// relock::permit_expirable_semaphore: Redisson's RPermitExpirableSemaphore in C++, on the same data
// (docs/data-layout.md §7): the name holds the available permits, {name}:timeout the permits
// taken (each a 16-byte random id, shown as 32 hex chars) scored by when they expire, and
// releases publish the new count on redisson_sc:{name}. Every script first takes back the
// permits whose time ran out, whoever holds them, so Java and C++ share permits and leases.
//
// Leases. A permit acquired with a lease expires then. Beyond Redisson: one acquired without a
// lease is renewed by the client's watchdog (config::watchdog_lease, renewed every third of it)
// while its client lives, and comes back a lease after the client dies, so a crashed holder
// never keeps a permit for good (Redisson's permits without a lease never expire:
// redisson/redisson#2045, #4462). A permit the watchdog finds gone, or cannot renew in time, is
// lost: permit_options::on_lost and config::on_lock_lost hear of it, and its release reports
// errc::lock_lost.
//
// Waiting is the semaphore's (semaphore.hpp): by message, a permit per woken waiter, looking
// again at least when the earliest permit expires, and every second. Acquiring from a name that
// holds nothing fails with errc::not_initialized unless semaphore_options::wait_when_absent.
//
// A cheap handle; it must not outlive its client. Thread-safe. Misuse: an empty or oversized
// name throws errc::invalid_argument when the handle is made; a permit id that is not 32 hex
// chars, a lease or wait that is negative or absurd, a count below 0 throw it before any I/O.
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
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>
#include <relock/semaphore.hpp>

namespace relock {

struct permit_options {
  // How long the permit lives. Empty: the watchdog lease, renewed while this client lives.
  std::optional<std::chrono::milliseconds> lease{};
  // How long to wait for a permit. Empty: async_acquire waits for ever.
  std::optional<std::chrono::milliseconds> wait{};
  std::stop_token stop{};
  // Called on relock's I/O thread if the permit is lost (errc::lock_lost, errc::renewal_failed).
  std::function<void(std::error_code)> on_lost{};
};

class RELOCK_API permit_expirable_semaphore {
 public:
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }

  // --- Blocking (throw relock::error on failure) ---
  // Waits for a permit and returns its id (32 lowercase hex chars).
  std::string acquire(std::optional<std::chrono::milliseconds> lease = {},
                      std::stop_token stop = {});
  // A permit if one is free now (wait zero), or within `wait`; nullopt when none came.
  std::optional<std::string> try_acquire(std::chrono::milliseconds wait = {},
                                         std::optional<std::chrono::milliseconds> lease = {},
                                         std::stop_token stop = {});
  // Gives the permit back. errc::not_owner when no such permit is held, errc::lock_lost when
  // this client held it and it expired or was taken back.
  void release(std::string_view permit_id);
  // The same, false instead of an error when the permit is not held.
  bool try_release(std::string_view permit_id);
  // The permit now expires `lease` from now (the watchdog stops renewing it); false when no
  // such permit is held.
  bool update_lease(std::string_view permit_id, std::chrono::milliseconds lease);

  // --- Administration ---
  std::int64_t available_permits() const;
  std::int64_t acquired_permits() const;  // held and not expired, by every client
  // Makes available + acquired equal `permits` (Redisson 4.x setPermits): the available count
  // moves by the difference.
  void set_permits(std::int64_t permits);
  // Sets the available count only when the name holds nothing.
  bool try_set_permits(std::int64_t permits);
  // Adds `permits` (may be negative) to the available count; creates it when absent.
  void add_permits(std::int64_t permits);

  // --- Async ---
  // void(std::error_code, std::optional<std::string> permit_id): waits as options.wait says
  // (empty: for ever); nullopt when the wait ran out.
  template <class Token>
  auto async_acquire(permit_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::optional<std::string>)>(
        [self = *this](auto handler, permit_options opts) mutable {
          auto c = detail::erase_cancellable<std::error_code, std::optional<std::string>>(
              std::move(handler), self.io(), std::move(opts.stop));
          opts.stop = std::move(c.stop);
          self.start_acquire(std::move(opts), std::move(c.done));
        },
        token, std::move(options));
  }
  // void(std::error_code): not_owner, lock_lost as release.
  template <class Token>
  auto async_release(std::string permit_id, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, std::string id) mutable {
          self.start_release(std::move(id),
                             detail::erase<std::error_code>(std::move(handler), self.io()));
        },
        token, std::move(permit_id));
  }

 private:
  friend class client;  // makes every handle
  permit_expirable_semaphore(std::shared_ptr<detail::client_core> core, std::string name,
                             semaphore_options options = {});

  using acquire_done = detail::completion<void(std::error_code, std::optional<std::string>)>;
  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_acquire(permit_options options, acquire_done done);
  void start_release(std::string permit_id, detail::completion<void(std::error_code)> done);
  std::optional<std::string> acquire_blocking(permit_options options);

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
  std::string channel_;
  semaphore_options options_;
};

}  // namespace relock
