// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::mutex: Redisson's RLock in C++. A reentrant, leased, distributed mutex whose data in
/// Redis is exactly Redisson's (see docs/data-layout.md §2), so Java and C++ can share a name.
/// The same handle serves every kind of hold: client.lock (RLock), client.non_reentrant_lock, and
/// each side of client.read_write_lock (§4); the kind decides the data, the surface is this one.
///
/// A mutex is a cheap handle (client + name + kind): copy it, make one per use, or keep one; it
/// must not outlive its client. It satisfies the standard TimedLockable requirements for the
/// calling thread, so std::unique_lock, std::scoped_lock and try_lock_for work. Every operation
/// also has an async form taking any Asio completion token and an explicit relock::owner.
///
/// Lease: with none, the hold lives config::watchdog_lease (30 s) and the client's watchdog
/// renews it every lease/3 while held; with an explicit lease, the hold simply expires then.
/// A hold that the watchdog finds gone (errc::lock_lost), or could not renew before its validity
/// deadline (errc::renewal_failed; see valid_until()), is lost: config::on_lock_lost and the hold's
/// on_lost hear of it, and the owner's next unlock reports errc::lock_lost.
///
/// Order: waiters of one client are served in the order they came (a new wait for a reentrant
/// or non-reentrant lock queues behind that client's threads already waiting for it, rather than
/// taking it from them); between clients the lock is unfair, as Redisson's RLock is. Use
/// client.fair_lock for one order across every client.
///
/// Waiting rides through a lost connection: a dropped connection or a restarted server inside the
/// wait is a reason to reconnect, resubscribe and try again; the wait fails with
/// errc::connection only when its deadline passes with Redis still unreachable.
///
/// Misuse: an empty name or one over 64 KiB throws errc::invalid_argument when the handle is
/// made; negative or absurd durations (over 100 years) throw it before any I/O. Blocking calls
/// on relock's own I/O thread (from inside a completion handler) throw errc::would_deadlock.
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
#include <relock/detail/acquire_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/core_access.hpp>
#include <relock/detail/export.hpp>
#include <relock/detail/lockable.hpp>
#include <relock/errors.hpp>
#include <relock/lock_options.hpp>
#include <relock/owner.hpp>

namespace relock {

namespace detail::waiting {
struct lock_kind;  // what a kind acquires, releases and renews with (src/waiting/lock_kind.hpp)
}
namespace detail::locks {
struct lock_access;  // how the lock sets drive their members (src/locks/lock_access.hpp)
}

/// \copydoc lock.hpp
class RELOCK_API mutex : public detail::lockable<mutex> {
 public:
  /// The name it was made with, as Redisson names the lock.
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }  ///< the name after the client's name_mapper

  /// \name Blocking, for the calling thread (TimedLockable)
  /// lock(), lock(lease), lock(stop, lease), try_lock(), try_lock(wait[, lease]),
  /// try_lock_for, try_lock_until: detail::lockable.
  ///@{

  /// Never throws (it runs in std::unique_lock's destructor): a failure goes to the client's
  /// on_unlock_error / on_lock_lost callbacks and the log.
  void unlock() noexcept;
  /// The same, handing the failure (not_owner, lock_lost, connection...) to the caller.
  void unlock(std::error_code& ec) noexcept;
  ///@}

  /// \name Queries and administration (throw relock::error on failure)
  ///@{

  /// Deletes the lock whoever holds it and wakes waiters; false when it was free. Refuses with
  /// errc::wrong_type, changing nothing, a name that holds anything but a lock's hash.
  bool force_unlock();
  /// Whether anyone holds the lock, in any process (either side, for a read-write lock).
  bool is_locked() const;
  /// Whether the calling thread holds it.
  bool is_held_by_current_thread() const;
  /// Whether `o`, an owner of this client, holds it.
  bool is_held_by(owner o) const;
  std::int64_t hold_count() const;  ///< the calling thread's holds
  /// `o`'s holds: how many times it acquired the lock without releasing it.
  std::int64_t hold_count(owner o) const;
  /// The same for any client's owner field ("<client-id>:<thread-id>", such as a Redisson
  /// thread's), taken as an opaque string.
  bool is_held_by(std::string_view owner_field) const;
  /// The holds of any client's owner field, taken as an opaque string.
  std::int64_t hold_count(std::string_view owner_field) const;
  /// This client's field for `o`, as written in the lock's hash.
  std::string owner_field(owner o) const { return field(o); }
  /// Time left on the hold; nullopt when the lock is free; milliseconds::max() when the key has
  /// no expiry.
  std::optional<std::chrono::milliseconds> remaining_lease() const;
  ///@}

  /// \name Local validity: what this client knows without asking Redis
  ///@{

  /// Until when the calling thread's (or `o`'s) hold is certainly valid, on the steady clock:
  /// the sending time of its last confirmed acquire or renewal, plus the lease, minus a margin
  /// for the server's clock running fast (1% of the lease + 2 ms). Nothing but a fault outside
  /// the lock's rules (someone deleting the key, Redis losing data) ends the hold before then.
  /// A watchdog-renewed hold whose renewals cannot get through is reported lost (on_lost,
  /// errc::renewal_failed) by this deadline. nullopt when this client records no such hold; a
  /// time in the past when a fixed lease has run out. Answered by relock's I/O thread (no I/O).
  std::optional<std::chrono::steady_clock::time_point> valid_until() const;
  /// The same for the owner `o`.
  std::optional<std::chrono::steady_clock::time_point> valid_until(owner o) const;
  /// The same as the time left from now (zero once passed).
  std::optional<std::chrono::milliseconds> valid_for() const;
  /// The same for the owner `o`.
  std::optional<std::chrono::milliseconds> valid_for(owner o) const;
  ///@}

  /// \name Async: any completion token (callback, asio::use_future, asio::use_awaitable)
  /// The handler runs on its associated executor (relock's I/O thread when it has none). Such an
  /// executor's context must outlive the client: relock posts to it from its own thread.
  /// An operation keeps its own copy of the handle, so one started on a temporary (deferred,
  /// awaited) completes as on a named handle. A wait ends with errc::cancelled on a stop request
  /// (options.stop) or on a cancellation of the handler's Asio cancellation slot (any type;
  /// bind_cancellation_slot, awaitable operators), leaving no hold; unlock, one round trip,
  /// ignores cancellation and completes within the command timeout.
  /// A token wrapped in relock::with_detail gets a std::exception_ptr to a relock::error with
  /// the server's text instead of the bare std::error_code.
  ///@{

  /// void(std::error_code): not_owner when `o` holds nothing, lock_lost when its hold expired.
  template <class Token>
  auto async_unlock(owner o, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, owner who) mutable {
          self.start_release(who, detail::erase<>(std::move(handler), self.io()));
        },
        token, o);
  }
  ///@}

 private:
  friend class client;  // makes every handle
  friend class fenced_lock;
  friend class detail::lockable<mutex>;
  friend struct detail::locks::lock_access;  // the lock sets (multi_lock, red_lock) drive their
                                             // members

  mutex(std::shared_ptr<detail::client_core> core, std::string name,
        const detail::waiting::lock_kind& kind);

  // Internally every outcome also carries a detail for humans (the server's text, the owner).
  using acquire_done = detail::completion<void(std::error_code, detail::acquire_result)>;
  using release_done = detail::answer<>;

  asio::io_context& io() const { return detail::io_of(*core_); }
  // `empty_wait_is_forever`: async_lock waits for ever when options.wait is empty,
  // async_try_lock tries once.
  void start_acquire(owner who, lock_options options, bool empty_wait_is_forever,
                     acquire_done done);
  void start_release(owner who, release_done done);
  // Throws relock::error on failure; the result says whether it was acquired, and its token.
  detail::acquire_result acquire_blocking(owner who, lock_options options,
                                          bool empty_wait_is_forever);
  std::string owner_id(owner o) const;  // "<client-id>:<owner-id>"
  std::string field(owner o) const;     // its hash field for this kind of hold
  detail::client_core& core() const { return *core_; }
  void unlock_reporting(std::error_code* out) noexcept;

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
  std::string channel_;
  const detail::waiting::lock_kind* kind_;
};

}  // namespace relock
