// SPDX-License-Identifier: Apache-2.0
/// \file
/// What multi_lock and red_lock share: a set of relock::mutex members (any kinds, on one client or
/// several) held for one owner, with the TimedLockable surface, async forms and one release
/// path. They differ only in how they acquire (all members, or a quorum): docs/design.md,
/// "Composites". Made only as one of those two (see multi_lock.hpp and red_lock.hpp); the set's
/// members and rule live in the library, behind one pointer.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/export.hpp>
#include <relock/detail/lockable.hpp>
#include <relock/lock.hpp>
#include <relock/lock_options.hpp>

namespace relock {

/// One member's failure, as an unlock reports it. A red_lock's members share one name: `index`
/// and `server` say which member failed.
struct member_failure {
  std::string member;  ///< the member lock's name
  /// Why: not_owner, lock_lost, connection, timeout...
  std::error_code ec;
  /// The same in words, as relock::error's what() has them.
  std::string detail;
  std::size_t index = 0;  ///< the member's place in members()
  /// The member's server as its client knows it: host:port from its URL (a cluster or Sentinel
  /// client: its URL, password hidden).
  std::string server{};
};

namespace detail {

// How a set's acquire ended, between the library and the public headers.
struct lock_set_result {
  bool acquired = false;
  std::string detail{};
  std::chrono::milliseconds validity{0};  // red_lock: lease - elapsed - drift, when acquired
  std::size_t held = 0;                   // members held, when acquired
};

namespace lock_sets {
struct lock_set_rule;   // how a set acquires: all members, or a quorum (src/lock_sets/lock_set.cpp)
struct lock_set_state;  // the members and the rule
}  // namespace lock_sets

}  // namespace detail

/// \copydoc lock_set.hpp
class RELOCK_API lock_set : public detail::lockable<lock_set> {
 public:
  /// The members in the order the set acquires them.
  const std::vector<mutex>& members() const;

  /// \name Blocking, for the calling thread (TimedLockable)
  /// lock(), lock(lease), lock(stop, lease), try_lock(), try_lock(wait[, lease]),
  /// try_lock_for, try_lock_until: detail::lockable.
  ///@{

  /// Releases every member, all at once. Never throws: failures go to each member client's
  /// on_unlock_error callback and log, as mutex::unlock().
  void unlock() noexcept;
  /// The same, with the outcome for the caller: not_owner when no member was held, lock_lost
  /// when fewer members were still held than make a hold (all of them for a multi-lock, a
  /// quorum for a red_lock), else the error of a member that could not be reached (its hold
  /// stays until its lease ends). See unlock_members for every member's failure.
  void unlock(std::error_code& ec) noexcept;
  /// Releases every member and returns the members that failed: not_owner (it was not held),
  /// lock_lost (it had expired), connection or timeout (its server could not be reached; its
  /// hold stays until its lease ends). Empty when every member was released.
  std::vector<member_failure> unlock_members() noexcept;
  ///@}

  /// Until when the owner's hold on the set is certainly valid, from its members' own
  /// validity (mutex::valid_until): for multi_lock the earliest member's, for red_lock the time
  /// when fewer than a quorum would remain. nullopt when too few members record a hold.
  std::optional<std::chrono::steady_clock::time_point> valid_until() const;
  /// The same for the owner `o`.
  std::optional<std::chrono::steady_clock::time_point> valid_until(owner o) const;

  /// \name Async: any completion token
  /// The handler runs on the first member's client's I/O thread unless it has an executor of
  /// its own.
  ///@{

  /// void(std::error_code, std::vector<member_failure>): the outcome, as unlock(ec) has it, and
  /// every member's failure.
  template <class Token>
  auto async_unlock(owner o, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::vector<member_failure>)>(
        [self = *this](auto handler, owner who) mutable {
          self.start_release(
              who, detail::erase<std::vector<member_failure>>(std::move(handler), self.io()));
        },
        token, o);
  }
  ///@}

 private:
  friend class multi_lock;
  friend class red_lock;
  friend class detail::lockable<lock_set>;
  using acquire_done = detail::completion<void(std::error_code, detail::lock_set_result)>;
  using release_done = detail::answer<std::vector<member_failure>>;

  // Throws errc::invalid_argument for no members, or two members on the same key and server.
  lock_set(std::vector<mutex> members, const detail::lock_sets::lock_set_rule& how);

  // Starts the set's acquire; `empty_wait_is_forever` as in mutex.
  void start_acquire(owner who, lock_options options, bool empty_wait_is_forever,
                     acquire_done done);
  void start_release(owner who, release_done done);
  // Throws relock::error on failure.
  detail::lock_set_result acquire_blocking(owner who, lock_options options,
                                           bool empty_wait_is_forever);
  asio::io_context& io() const;
  std::size_t quorum() const;  // every member, or n/2 + 1 of the servers
  void unlock_reporting(std::error_code* out) noexcept;

  std::shared_ptr<const detail::lock_sets::lock_set_state> state_;
};

}  // namespace relock
