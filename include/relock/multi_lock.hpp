// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::multi_lock: several locks held as one (Redisson's RedissonMultiLock), all or nothing.
///
/// Members are relock::mutex handles of any kind (reentrant, fair, either side of a read-write
/// lock, fenced, spin), on one client or several, on one server or many. The multi-lock has no
/// data of its own: each member is an ordinary hold of its kind, with its own lease or
/// watchdog, visible to Redisson as such (a Java RedissonMultiLock over the same names excludes
/// it, and the reverse).
///
/// Acquiring takes every member or none. It tries every member at once (so an uncontended
/// acquire costs about one round trip, not one per member), and when some member is held
/// elsewhere, waits on the first such member in the set's canonical order on that member's own
/// wake-ups, giving back any member after it first; it never waits holding a member that comes
/// later. The canonical order sorts members by key, then by server, whatever order they were
/// given in, so two multi-locks over the same members cannot deadlock or livelock each other
/// (Redisson acquires in the given order, and two sets given in opposite orders can starve
/// each other). It never returns acquired without holding every member, nor fails holding any.
///
/// Prefer it to std::scoped_lock(a, b, c), which also works on relock locks (std::lock's own
/// try-and-back-off algorithm), when the members should be asked at once rather than one by
/// one, when the wait needs a deadline, a lease or a stop_token, or from async code.
///
/// Leases: each member's lease (or watchdog) is its own, starting when the member was taken;
/// valid_until() is the earliest member's validity. With an explicit lease, a wait on one
/// member while others are held is capped at half the lease: at the cap they all go back and
/// the set is tried again, so a member taken early cannot expire while the set waits.
///
/// Misuse: no members, or two members on the same key of the same server, throw
/// errc::invalid_argument. The owner of a hold is the calling thread (or the explicit owner of
/// an async call), as for mutex; unlock() releases every member.
#pragma once

#include <vector>

#include <relock/detail/export.hpp>
#include <relock/lock.hpp>
#include <relock/lock_set.hpp>

namespace relock {

/// \copydoc multi_lock.hpp
class RELOCK_API multi_lock : public lock_set {
 public:
  /// A set of `members`; throws errc::invalid_argument for none, or two on the same key of the
  /// same server.
  explicit multi_lock(std::vector<mutex> members);
  /// The same, with the members given one by one.
  template <class... More>
  multi_lock(const mutex& first, const More&... more)
      : multi_lock(std::vector<mutex>{first, static_cast<const mutex&>(more)...}) {}
};

}  // namespace relock
