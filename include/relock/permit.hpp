// SPDX-License-Identifier: Apache-2.0
/// relock::permit: permits taken from one semaphore, owned by one object that gives them back
/// when it goes out of scope, as std::unique_lock does for a mutex. Either one permit of a
/// relock::permit_expirable_semaphore (it has an id: 32 hex chars) or `count()` permits of a
/// relock::semaphore (no id).
///
/// Ownership: move-only; a moved-from permit is empty, and an empty one gives nothing back.
/// release() gives the permits back now and reports the outcome; detach() gives up ownership
/// without giving anything back (the permits stay taken: an id-permit taken without a lease
/// stays renewed by the watchdog while its client lives).
///
/// The destructor never throws: a failure (errc::lock_lost when an id-permit's lease ran out,
/// errc::connection...) goes to the client's config::on_unlock_error callback and its log, as
/// mutex::unlock() does. On relock's own I/O thread (in a completion handler) it cannot wait
/// for Redis: there it sends the release without waiting, and a failure is reported the same
/// way when the answer comes.
///
/// One object, one thread at a time (as any std type); the semaphore it came from is any
/// thread's. A permit keeps a copy of its semaphore's handle, and like the handle must not
/// outlive its client: given back after the client is destroyed it reports errc::cancelled (an
/// id-permit then comes back when its lease or the watchdog lease runs out; a plain
/// semaphore's permits never do).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>

namespace relock {

class semaphore;
class permit_expirable_semaphore;

namespace detail::synchronizers {
struct permit_state;  // the semaphore's handle, the id and the count (src/synchronizers/permit.cpp)
}  // namespace detail::synchronizers

/// Permits taken from a semaphore, given back when the object goes out of scope.
class RELOCK_API permit {
 public:
  /// An empty permit: owns nothing.
  permit() noexcept;
  /// Takes `other`'s permits; `other` is left empty.
  permit(permit&& other) noexcept;
  /// Gives back the permits held now (as the destructor does), then takes `other`'s.
  permit& operator=(permit&& other) noexcept;
  permit(const permit&) = delete;
  permit& operator=(const permit&) = delete;
  /// Gives the permits back, if it still owns them; never throws (see the top of this file).
  ~permit();

  /// Whether it owns permits.
  explicit operator bool() const noexcept { return owns(); }
  /// Whether it owns permits.
  bool owns() const noexcept { return state_ != nullptr; }
  /// An id-permit's id, 32 lowercase hex chars, as Redisson and `relock status` show it;
  /// empty for a plain semaphore's permits and for an empty permit.
  const std::string& id() const noexcept;
  /// How many permits it owns: 1 for an id-permit, n for a plain semaphore's, 0 when empty.
  std::int64_t count() const noexcept;
  /// The name of the semaphore it came from; empty when empty.
  const std::string& semaphore_name() const noexcept;

  /// Gives the permits back now; empty afterwards, even when it throws (a release that failed
  /// is not tried twice: a plain semaphore's permits would count twice). Throws relock::error:
  /// errc::lock_lost (an id-permit's lease ran out, or it was taken back), errc::not_owner
  /// (empty, or the id-permit is not held), errc::connection, errc::timeout... Called on relock's
  /// I/O thread it throws errc::would_deadlock instead and keeps the permits (use async_release
  /// there).
  void release();
  /// The same, handing the failure to the caller instead of throwing.
  void release(std::error_code& ec) noexcept;
  /// Gives up ownership without giving anything back, as std::unique_ptr::release does, and
  /// returns the id (empty for a plain semaphore's permits: read count() first). The permits
  /// stay taken: give them back with the semaphore's release(id) or release(n).
  std::string detach() noexcept;

  /// Gives the permits back without blocking; empty from the call on (with a deferred token that
  /// is never started, the operation's destruction gives them back). Any completion token;
  /// void(std::error_code): errors as release(), errc::not_owner when it was empty. The handler
  /// runs on its associated executor (relock's I/O thread when it has none; for an empty
  /// permit, which has no client, the system executor).
  template <class Token>
  auto async_release(Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [p = std::move(*this)](auto handler) mutable {
          if (!p) {
            auto ex = asio::get_associated_executor(handler);
            if constexpr (detail::takes_detail<decltype(handler)>) {
              handler.set_detail("permit::async_release: this permit owns nothing");
            }
            asio::post(ex, [h = std::move(handler)]() mutable {
              std::move(h)(make_error_code(errc::not_owner));
            });
            return;
          }
          auto& io = p.io();
          p.start_release(detail::erase<>(std::move(handler), io));
        },
        token);
  }

 private:
  friend class semaphore;
  friend class permit_expirable_semaphore;

  explicit permit(std::unique_ptr<detail::synchronizers::permit_state> state) noexcept;
  /// `n` permits taken from `from`.
  static permit counting(const semaphore& from, std::int64_t n);
  /// The permit `id` (lowercase hex) taken from `from`.
  static permit with_id(const permit_expirable_semaphore& from, std::string id);

  asio::io_context& io() const;
  /// Sends the release and empties this permit; `done` runs on relock's I/O thread.
  void start_release(detail::answer<> done);

  std::unique_ptr<detail::synchronizers::permit_state> state_;
};

}  // namespace relock
