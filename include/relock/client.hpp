// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::client: one connection to a Redis deployment, shared by every lock made from it.
///
/// A client has a random UUID (its id: the first half of every hold's owner field), one I/O
/// thread, a small pool of command connections (config::command_connections, 2 by default), one
/// subscriber connection and one watchdog. Construction connects and throws relock::error when
/// the server cannot be reached or refuses our credentials. It is thread-safe; lock handles made
/// from it are cheap and must not outlive it.
///
/// Destruction, from any thread but relock's own: every operation under way completes with
/// errc::cancelled, exactly once, whatever it was doing; a thread blocked in lock() or any other
/// blocking call returns with relock::error(errc::cancelled). An acquire whose script may have
/// run is released first, so a cancelled acquire leaves no hold behind (destruction waits for
/// that, at most config::command_timeout, only while Redis answers). Holds already taken are
/// left to expire after their lease, as with Redisson; the watchdog stops renewing them.
/// Handles used afterwards fail with errc::cancelled. Do not destroy a client inside one of its
/// own completion handlers (its I/O thread cannot join itself).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <asio/async_result.hpp>
#include <relock/blocking_queue.hpp>
#include <relock/config.hpp>
#include <relock/count_down_latch.hpp>
#include <relock/delayed_queue.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>
#include <relock/fenced_lock.hpp>
#include <relock/lock.hpp>
#include <relock/lock_info.hpp>
#include <relock/multi_lock.hpp>
#include <relock/observer.hpp>
#include <relock/permit_expirable_semaphore.hpp>
#include <relock/queue_info.hpp>
#include <relock/read_write_lock.hpp>
#include <relock/red_lock.hpp>
#include <relock/semaphore.hpp>
#include <relock/server_node.hpp>
#include <relock/with_detail.hpp>

namespace relock {

namespace detail {
class client_core;
struct client_access;
}  // namespace detail

/// \copydoc client.hpp
class RELOCK_API client {
 public:
  /// Connects to the deployment `settings.url` names; throws relock::error when it cannot be
  /// reached or refuses the credentials, or for bad settings (errc::invalid_argument).
  explicit client(config settings = {});
  /// Ends every operation under way with errc::cancelled and stops the I/O thread, as the
  /// class description says.
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// The client's UUID, canonical 36-char lowercase form.
  const std::string& id() const;
  /// The settings it was made with.
  const config& settings() const;

  /// A reentrant lock (Redisson's RLock) on `name`. Cheap; throws errc::invalid_argument for
  /// an empty name or one over 64 KiB.
  mutex lock(std::string_view name) const;
  /// The same data, but a second acquire by the holder fails with errc::non_reentrant.
  mutex non_reentrant_lock(std::string_view name) const;
  /// A read-write lock (Redisson's RReadWriteLock) on `name`: see read_write_lock.hpp.
  relock::read_write_lock read_write_lock(std::string_view name) const;
  /// A fair lock (Redisson's RFairLock): waiters, in every process and language, get the lock in
  /// the order they asked for it (data-layout §3). A release tells the head waiter alone. A
  /// waiter that gives up (timeout, stop_token, cancel, client destroyed) leaves the queue at
  /// once and those behind keep their order; one that died is dropped once it has been silent
  /// for config::fair_lock_wait_timeout at the head of the queue.
  mutex fair_lock(std::string_view name) const;
  /// The same, refusing a second acquire by the holder with errc::non_reentrant.
  mutex non_reentrant_fair_lock(std::string_view name) const;
  /// A fenced lock (Redisson's RFencedLock): a reentrant lock handing out fencing tokens; see
  /// fenced_lock.hpp.
  relock::fenced_lock fenced_lock(std::string_view name) const;
  /// A spin lock (Redisson's RSpinLock): the reentrant lock's data, without pub/sub. Waiters try
  /// again after a growing delay (config::spin_backoff) instead of listening for a release, and
  /// releases publish nothing. For deployments where pub/sub is scarce or unreliable.
  mutex spin_lock(std::string_view name) const;

  /// A counting semaphore (Redisson's RSemaphore) on `name`: see semaphore.hpp. Cheap; throws
  /// errc::invalid_argument for an empty name or one over 64 KiB.
  relock::semaphore semaphore(std::string_view name, semaphore_options options = {}) const;
  /// A semaphore whose permits have ids and leases (Redisson's RPermitExpirableSemaphore): see
  /// permit_expirable_semaphore.hpp.
  relock::permit_expirable_semaphore permit_expirable_semaphore(
      std::string_view name, semaphore_options options = {}) const;
  /// A count-down latch (Redisson's RCountDownLatch): see count_down_latch.hpp.
  relock::count_down_latch count_down_latch(std::string_view name) const;

  /// A blocking queue (Redisson's RBlockingQueue) on the list `name`: see blocking_queue.hpp.
  /// Cheap; throws errc::invalid_argument for an empty name or one over 64 KiB.
  relock::blocking_queue blocking_queue(std::string_view name) const;
  /// A delayed queue (Redisson's RDelayedQueue) feeding the blocking queue `destination`: see
  /// delayed_queue.hpp. Starts this client's transfer for it, which runs while a handle lives.
  relock::delayed_queue delayed_queue(std::string_view destination) const;

  /// What the queue `name` holds right now: its length, and the delayed queue feeding it (its
  /// length and earliest due time), read-only. Throws relock::error (invalid_argument for a bad
  /// name, connection...).
  queue_info inspect_queue(std::string_view name) const;

  /// What `name` holds in Redis right now, whoever wrote it (relock or Redisson): its kind,
  /// holders, lease and waiters, read in one consistent snapshot (see lock_info.hpp). Throws
  /// relock::error: invalid_argument for a bad name, connection, timeout...
  lock_info inspect(std::string_view name) const;

  /// The servers behind this client now: its master (one server, or Sentinel's master now), or
  /// every master of a Cluster as its slot map has them; with Sentinel, the URL's sentinels
  /// after it. For tools and health checks, with call().
  std::vector<server_node> nodes() const;
  /// Sends one command to one of nodes() and waits for its reply: INFO, CONFIG GET, TIME, SCAN,
  /// CLIENT LIST, SENTINEL MASTER... for tools and health checks (relock doctor and top use it).
  /// An error reply is returned as one (server_reply::is_error); a failed connection, no reply
  /// within config::command_timeout, or a node the client does not know throws relock::error.
  /// A master's command rides the client's own connections, so its round trip is the locks'
  /// own; a sentinel's opens a connection of its own. Blocking only: a diagnostic, not a path
  /// for lock traffic.
  server_reply call(const server_node& node, std::vector<std::string> command) const;
  /// The same, async: void(std::error_code, lock_info), with any Asio completion token.
  template <class Token>
  auto async_inspect(std::string_view name, Token&& token) const {
    return asio::async_initiate<Token, void(std::error_code, lock_info)>(
        [core = core_](auto handler, std::string n) {
          start_inspect(core, std::move(n),
                        detail::erase<lock_info>(std::move(handler), io(*core)));
        },
        token, std::string(name));
  }

 private:
  friend struct detail::client_access;
  // Static, on the core an operation holds: a deferred operation may start after the client's
  // end, and then completes with errc::cancelled.
  static asio::io_context& io(detail::client_core& core);
  static void start_inspect(const std::shared_ptr<detail::client_core>& core, std::string name,
                            detail::answer<lock_info> done);

  std::shared_ptr<detail::client_core> core_;
};

}  // namespace relock
