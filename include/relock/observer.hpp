// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::observer: what a client does, as typed events, for metrics and traces.
///
/// Set config::observer to an object derived from relock::observer and override the calls you
/// want; the others do nothing. Every call is made on relock's I/O thread, once the work it
/// reports has finished: keep it short (count, record in a histogram, hand off to a queue) and
/// never block or call relock synchronously from it. With no observer set, relock tests one
/// pointer per event and builds nothing.
///
/// Names are unbounded (a lock per order id, a UUID in the name): an event carries the key, and a
/// metric should label by a bounded value derived from it (the kind, or a prefix), never the key.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace relock {

/// How an acquire ended.
enum class acquire_outcome {
  acquired,      ///< the hold (or the permit, or the open latch) is the caller's
  not_acquired,  ///< the wait ran out with it held elsewhere; Redis answered throughout
  failed,        ///< an error: see acquire_event::error
  cancelled,     ///< a stop token, Asio's cancellation, or the client's destruction
};

/// An acquire that began: it ends with exactly one acquire_event, so the two give the waiters
/// now (begun minus finished).
struct acquire_start_event {
  std::string_view kind{};  ///< "lock", "fair lock", "semaphore"...
  std::string_view key{};   ///< the Redis key (after the name mapper)
};

/// An acquire that finished: a lock's, a lock set member's, a semaphore's, a latch's await.
struct acquire_event {
  std::string_view kind{};  ///< what was acquired, in words: "lock", "fair lock", "semaphore"...
  std::string_view key{};   ///< the Redis key (after the name mapper)
  acquire_outcome outcome = acquire_outcome::failed;  ///< how it ended
  std::error_code error{};                            ///< why, when it failed or was cancelled
  std::chrono::microseconds waited{0};  ///< from the call to the end, tries and waits included
  std::int64_t tries = 0;               ///< acquire scripts sent (1 when it was free)
};

/// A release (unlock) that finished.
struct release_event {
  std::string_view kind{};  ///< "lock", "fair lock", "semaphore"...
  std::string_view key{};   ///< the Redis key
  std::error_code error{};  ///< none, or not_owner, lock_lost, connection...
  /// How long this client held it, from the outermost acquire's sending to the release's; zero
  /// when relock recorded no hold (a semaphore's permits, a release by another process's id).
  std::chrono::microseconds held{0};
};

/// One renewal call of the watchdog, for `holds` holds that share a slot.
struct renewal_event {
  std::size_t holds = 0;                 ///< holds it renewed (or tried to)
  std::error_code error{};               ///< none, or why the call failed (it is tried again)
  std::chrono::microseconds latency{0};  ///< from sending to the reply
};

/// A hold this client lost, as config::on_lock_lost hears it.
struct loss_event {
  std::string_view key{};    ///< the Redis key
  std::string_view owner{};  ///< the hash field that held it
  /// errc::lock_lost (found gone) or errc::renewal_failed (no renewal got through in time).
  std::error_code reason{};
};

/// What happened to a connection.
enum class connection_change {
  lost,      ///< it was up and failed (relock reconnects with backoff)
  restored,  ///< it is up again after a loss
};

/// A connection to a server (a command, subscriber or blocking connection) went down or came
/// back. A first connect is no event: only a loss and the recovery from it.
struct connection_event {
  std::string_view address{};                          ///< host:port as relock dials it
  connection_change change = connection_change::lost;  ///< lost or restored
  std::error_code error{};                             ///< lost: why
  std::chrono::microseconds down_for{0};               ///< restored: how long it was down
};

/// A change of the servers' layout that the client followed.
enum class topology_change {
  slot_moved,  ///< a Cluster answered MOVED: the slot's master is `to` now
  new_master,  ///< one server's master (Sentinel's, or after a failover) is `to` now
};

/// The client now sends elsewhere.
struct topology_event {
  topology_change change = topology_change::slot_moved;  ///< what changed
  std::string_view from{};  ///< host:port of the node left (empty when unknown)
  std::string_view to{};    ///< host:port of the node now used
  int slot = -1;            ///< slot_moved: the slot; else -1
};

/// A write that waited for replicas (config::replica_sync): WAIT, or WAITAOF, after it.
struct replica_sync_event {
  std::string_view key{};               ///< the Redis key written
  int wanted = 0;                       ///< replicas asked for
  std::int64_t acknowledged = 0;        ///< replicas that acknowledged in time
  std::chrono::microseconds waited{0};  ///< from sending the write to WAIT's reply
  std::error_code error{};              ///< none, or errc::no_synced_replicas (fewer than wanted)
};

/// A subscription the server refused (NOPERM from the ACL rules, an error reply): waiters on
/// its channel are left to their timers, which relock also logs.
struct subscription_event {
  std::string_view channel{};  ///< the channel (or shard channel) refused
  std::string_view detail{};   ///< the server's words
};

/// Which queue operation.
enum class queue_operation {
  offer,     ///< delayed_queue::offer
  take,      ///< blocking_queue::take or poll (a wait for an element)
  transfer,  ///< a delayed queue's elements moved to its destination when due
};

/// How a queue operation ended.
enum class queue_outcome {
  done,       ///< offered, taken, or moved
  empty,      ///< take/poll: the wait ran out with nothing to take
  failed,     ///< an error: see queue_event::error
  cancelled,  ///< a stop token, Asio's cancellation, or the client's destruction
};

/// A queue operation that finished.
struct queue_event {
  queue_operation operation = queue_operation::take;  ///< which operation
  std::string_view key{};  ///< the queue's key (a delayed queue: its destination's)
  queue_outcome outcome = queue_outcome::done;  ///< how it ended
  std::error_code error{};                      ///< why, when it failed or was cancelled
  std::chrono::microseconds waited{0};          ///< take: the wait; offer, transfer: the round trip
  std::int64_t elements = 0;                    ///< transfer: elements moved; else 1 when done
};

/// Hears a client's work (config::observer). Every call runs on relock's I/O thread.
class observer {
 public:
  virtual ~observer() = default;
  /// An acquire began (its first script is about to go).
  virtual void on_acquire_start(const acquire_start_event&) {}
  /// An acquire finished, however it ended.
  virtual void on_acquire(const acquire_event&) {}
  /// A release finished.
  virtual void on_release(const release_event&) {}
  /// A watchdog renewal call got its reply, or failed.
  virtual void on_renewal(const renewal_event&) {}
  /// A hold was lost.
  virtual void on_loss(const loss_event&) {}
  /// A connection was lost, or restored.
  virtual void on_connection(const connection_event&) {}
  /// The client followed a topology change.
  virtual void on_topology(const topology_event&) {}
  /// A write waited for its replicas.
  virtual void on_replica_sync(const replica_sync_event&) {}
  /// A subscription was refused.
  virtual void on_subscription_refused(const subscription_event&) {}
  /// A queue operation finished.
  virtual void on_queue(const queue_event&) {}
};

}  // namespace relock
