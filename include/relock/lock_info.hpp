// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::lock_info: what a name holds in Redis, as client::inspect reads it.
///
/// inspect reads the lock's key, every auxiliary key of the lock family and a permit-expirable
/// semaphore's permits (docs/data-layout.md) in one server-side script, so the snapshot is
/// consistent: no holder can come or go between two of its parts. It never scans the keyspace.
/// The kind is recognised from the data alone, so holds taken by Redisson (Java) show up exactly
/// like relock's. Owner fields of other clients are shown as they are, never parsed.
///
/// A plain value type: copy it freely.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <relock/detail/export.hpp>

namespace relock {

/// What a name holds, as inspect recognises it from the data.
enum class object_kind {
  none,             ///< nothing is stored under the name (a free lock looks like this too)
  lock,             ///< a reentrant (or non-reentrant) lock: a hash of owner field -> holds
  read_write_lock,  ///< a hash with a `mode` field: read holds and write holds
  fair_lock,        ///< a lock whose waiters queue in redisson_lock_queue:{name}
  fenced_lock,      ///< a lock with a fencing-token counter, redisson_lock_token:{name}
  counter,          ///< a string holding an integer: a semaphore's permits or a latch's count
                    ///< (the data cannot tell which)
  unknown,          ///< another Redis type, or a hash or string of another shape
  /// A permit-expirable semaphore: its permits taken are in the sorted set {name}:timeout
  /// (data-layout §7), and the name holds the available count (or nothing). One with no permit
  /// taken looks like a counter.
  permit_semaphore,
};

/// Which side of a lock a holder holds: `exclusive` for every kind but the read-write lock,
/// whose holders hold its `read` or its `write` side.
enum class hold_side { exclusive, read, write };

/// One owner's holds on a lock.
struct holder {
  /// "<client-id>:<thread-id>"; a write hold's ":write" suffix taken off.
  std::string owner;
  /// How many times it holds it (re-entries).
  std::int64_t holds = 0;
  /// Which side it holds.
  hold_side side = hold_side::exclusive;
  /// A read side's holds each have their own lease (data-layout §4): the time left on each, by
  /// hold number; nullopt for one that has expired. Empty for other sides.
  std::vector<std::optional<std::chrono::milliseconds>> read_leases{};
};

/// A fair lock's waiter, in its queue.
struct queued_waiter {
  /// Its owner field, as its client wrote it.
  std::string owner;
  /// When it gives up, as the waiter's client wrote it (Unix epoch ms, by that client's clock).
  std::optional<std::int64_t> gives_up_at_ms;
};

/// A permit taken from a permit-expirable semaphore (data-layout §7).
struct semaphore_permit {
  std::string id;  ///< 32 lowercase hex chars: the member's 16 bytes (any other length as it is)
  /// When it expires, as its acquirer wrote it (Unix epoch ms, by that client's clock); nullopt
  /// for one that never expires (Redisson's 922337203685477). One already past it is still held
  /// until the semaphore's next acquire or release takes it back.
  std::optional<std::int64_t> expires_at_ms;
};

/// \copydoc lock_info.hpp
struct lock_info {
  std::string name;  ///< as given to inspect
  std::string key;   ///< after the client's name_mapper
  /// The server that serves the key, as "host:port": the one server, or the cluster master of
  /// the key's slot when inspect answered (a slot may move later).
  std::string node;
  /// What runs at `node`, as its INFO server names it: "redis 7.0.15", "valkey 9.1.2"; empty
  /// when the server refused INFO (an ACL user without it) or named no version.
  std::string server;
  /// Replica sync (config::replica_sync): how many replicas each lock write of this key waits
  /// for (0: no WAIT; in a cluster, the online replicas of its master), and how many acknowledged
  /// this client's last synced write (-1: none yet). With sync on, asked of the master: its
  /// online replicas, and how many of them had acknowledged its latest write when they last
  /// reported (each second), so a replica that stopped shows as behind.
  int synced_replicas = 0;
  /// How many replicas acknowledged this client's last synced write (-1: none yet).
  std::int64_t last_acknowledged = -1;
  /// With sync on: the master's online replicas, as it says.
  std::optional<int> online_replicas;
  /// With sync on: how many of them had acknowledged the master's latest write when they last
  /// reported (each second).
  std::optional<int> replicas_acknowledging;
  /// What the data says the name is.
  object_kind kind = object_kind::none;
  std::string redis_type;  ///< the key's Redis type as TYPE names it: "none", "hash", "string"...
  std::optional<std::string> mode;  ///< read-write lock: "read" or "write"
  std::vector<holder> holders;      ///< empty when free
  /// Time left on the key: nullopt when nothing is stored, milliseconds::max() without expiry.
  std::optional<std::chrono::milliseconds> remaining_lease;
  std::vector<queued_waiter> waiters;         ///< fair lock: head first
  std::optional<std::int64_t> fencing_token;  ///< fenced lock: the last token handed out
  std::optional<std::int64_t> value;          ///< counter: its integer
  /// Permit semaphore: `value` is the permits available (none when not stored); how many permits
  /// are taken, and the first 1000 of them to expire, soonest first.
  std::int64_t permits_taken = 0;
  /// The first 1000 permits to expire, soonest first.
  std::vector<semaphore_permit> permits;

  /// Whether anyone holds the lock.
  bool locked() const { return !holders.empty(); }
};

/// "none", "lock", "read-write", "fair", "fenced", "counter", "unknown", "permit-semaphore".
RELOCK_API const char* to_string(object_kind kind) noexcept;
/// "exclusive", "read", "write".
RELOCK_API const char* to_string(hold_side side) noexcept;

}  // namespace relock
