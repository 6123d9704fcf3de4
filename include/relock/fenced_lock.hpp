// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::fenced_lock: Redisson's RFencedLock in C++, on the same data (docs/data-layout.md §5).
///
/// A reentrant lock (the whole relock::mutex surface: blocking, TimedLockable, leases and the
/// watchdog, async) that hands out a fencing token: every successful acquisition, re-entries
/// included, takes the next value of the counter redisson_lock_token:{name}, which never
/// expires and never goes back, whichever client (C++ or Java) advances it. A resource guarded
/// by the lock remembers the highest token it has seen and refuses writes carrying a lower one,
/// so a holder that paused past its lease (and lost the lock) cannot overwrite its successor.
///
/// Which token to fence with: fence(), the token of the hold's outermost acquisition. Re-entries
/// advance the counter too (Redisson's rule, kept so both languages count alike), but a holder
/// is the same holder however often it re-enters; fence() stays put while it holds. Tokens are
/// per Redis shard: compare tokens of one lock name only.
///
/// Tokens increase but may skip: an acquire whose reply was lost (then released by relock) or
/// that was given back at shutdown took a token nobody was handed.
///
/// The lease is honoured by every overload (Redisson's lockAndGetToken(lease, unit) ignores it).
/// A plain reentrant lock (client::lock) on the same name excludes and is excluded, but does not
/// advance the counter.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <relock/detail/export.hpp>
#include <relock/lock.hpp>

namespace relock {

/// \copydoc fenced_lock.hpp
class RELOCK_API fenced_lock : public mutex {
 public:
  /// Waits for the lock and returns this acquisition's token.
  std::int64_t lock_and_get_token();
  /// The same; the hold lives `lease` (never renewed).
  std::int64_t lock_and_get_token(std::chrono::milliseconds lease);
  /// The token, or nullopt when the lock was not acquired: at once, or within `wait`.
  std::optional<std::int64_t> try_lock_and_get_token();
  /// The token, or nullopt when the lock was not acquired within `wait`.
  std::optional<std::int64_t> try_lock_and_get_token(std::chrono::milliseconds wait);
  /// The same; the hold lives `lease` (never renewed).
  std::optional<std::int64_t> try_lock_and_get_token(std::chrono::milliseconds wait,
                                                     std::chrono::milliseconds lease);

  /// The counter's current value: the last token handed out (0 before the first).
  std::int64_t token() const;
  /// The token of the outermost acquisition of the calling thread's (or `o`'s) current hold, as
  /// this client took it; nullopt when this client records no such hold, or when the hold began
  /// through another kind of lock on the name (a plain lock, which hands out no token).
  std::optional<std::int64_t> fence() const;
  /// The same for the owner `o`.
  std::optional<std::int64_t> fence(owner o) const;

  /// void(std::error_code, std::int64_t token): waits as mutex::async_lock (options.wait empty:
  /// for ever; ran out: errc::not_acquired).
  template <class Token>
  auto async_lock_and_get_token(owner o, lock_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::int64_t)>(
        [self = *this](auto handler, owner who, lock_options opts) mutable {
          auto c = detail::erase_cancellable<std::int64_t>(std::move(handler), self.io(),
                                                           std::move(opts.stop));
          opts.stop = std::move(c.stop);
          auto done = std::move(c.done);
          self.start_acquire(
              who, std::move(opts), true,
              [done = std::move(done)](std::error_code ec, detail::acquire_result r) mutable {
                if (!ec && !r.acquired) ec = errc::not_acquired;
                done(ec, r.detail, ec ? 0 : token_of(r));
              });
        },
        token, o, std::move(options));
  }
  /// void(std::error_code, std::optional<std::int64_t> token): nullopt when not acquired within
  /// options.wait (no wait when empty).
  template <class Token>
  auto async_try_lock_and_get_token(owner o, lock_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::optional<std::int64_t>)>(
        [self = *this](auto handler, owner who, lock_options opts) mutable {
          auto c = detail::erase_cancellable<std::optional<std::int64_t>>(
              std::move(handler), self.io(), std::move(opts.stop));
          opts.stop = std::move(c.stop);
          auto done = std::move(c.done);
          self.start_acquire(
              who, std::move(opts), false,
              [done = std::move(done)](std::error_code ec, detail::acquire_result r) mutable {
                std::optional<std::int64_t> t;
                if (!ec && r.acquired) t = token_of(r);
                done(ec, r.detail, t);
              });
        },
        token, o, std::move(options));
  }

 private:
  friend class client;  // makes every handle
  fenced_lock(std::shared_ptr<detail::client_core> core, std::string name,
              const detail::waiting::lock_kind& kind)
      : mutex(std::move(core), std::move(name), kind) {}

  static std::int64_t token_of(const detail::acquire_result& r);
  std::optional<std::int64_t> acquire_token(lock_options options, bool empty_wait_is_forever);
  std::int64_t waited_token(lock_options options);
};

}  // namespace relock
