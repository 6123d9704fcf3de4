// SPDX-License-Identifier: Apache-2.0
/// \file
/// Settings of a relock client. Every default says why it is what it is.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace relock {

class observer;

/// How much a log line matters (config::log).
enum class log_level { debug, info, warning, error };

/// Which publish/subscribe commands the lock scripts and waiters use (data-layout §1). Sharded
/// and classic pub/sub never hear each other, so every client on a name must agree: Redisson
/// 3.22 and later use sharded in a Redis 7 cluster, older Redisson classic. A URL's ?pubsub=MODE
/// (auto, sharded, classic, both) overrides this setting.
enum class publish_mode {
  auto_detect,  ///< sharded in a cluster whose nodes have it (Redis 7), classic elsewhere
  sharded,      ///< SSUBSCRIBE on the slot's master, SPUBLISH
  classic,      ///< SUBSCRIBE/PUBLISH (in a cluster, any node hears every channel)
  both,         ///< in a cluster: listen and publish both ways, so a fleet mid-upgrade (Redisson
                ///< 3.18 and 4.x side by side) wakes everyone; classic on one server
};

/// How a spin lock's waiter (client::spin_lock) paces its tries: it sleeps `initial` after the
/// first refusal, doubling after each one up to `max`, plus a random jitter of up to half the
/// delay so spinners that started together drift apart; never past the holder's remaining lease
/// or the caller's deadline, where it looks once more. `max` is at most an hour. Redisson's
/// defaults: exponential 1 ms to 128 ms; constant 64 ms.
struct backoff {
  /// The delay after the first refusal.
  std::chrono::milliseconds initial{1};
  /// The longest delay.
  std::chrono::milliseconds max{128};

  /// From `initial`, doubling up to `max`.
  static backoff exponential(std::chrono::milliseconds initial = std::chrono::milliseconds(1),
                             std::chrono::milliseconds max = std::chrono::milliseconds(128)) {
    return {initial, max};
  }
  /// Always `delay`.
  static backoff constant(std::chrono::milliseconds delay = std::chrono::milliseconds(64)) {
    return {delay, delay};
  }
};

/// Whether lock writes wait for a replica's acknowledgement (data-layout §1, replica sync):
/// acquire, release, renewal and force-release are followed, on the same connection, by
/// `WAIT <replicas> <replica_sync_timeout>`. Redis replicates asynchronously: a lock written to a
/// master that dies before its replica got the write is gone after the failover, and somebody
/// else gets it too. With sync, an acquire that no replica acknowledged is rolled back and
/// retried, then fails with errc::no_synced_replicas.
enum class replica_sync_mode {
  auto_detect,  ///< on whenever the master has replicas (as Sentinel, or the master itself, says)
  on,           ///< always: with no replica acknowledging, every lock write fails
  off,          ///< never wait: a failover may take back a lock that was granted
};

/// TLS, for the rediss://, rediss-cluster:// and rediss-sentinel:// URLs; a URL's tls_ca,
/// tls_cert, tls_key and tls_server_name options override the fields of the same names. Every
/// server's certificate is verified against `ca_file` (or the system's trust store) and its name
/// against the host relock connects to (or `server_name`), which is also sent as SNI.
struct tls_settings {
  std::string ca_file{};    ///< PEM file of the CAs to trust; empty: the system's store
  std::string cert_file{};  ///< PEM: this client's certificate, for tls-auth-clients servers
  std::string key_file{};   ///< PEM: its private key, unencrypted
  /// The name the servers' certificates must carry (and the SNI sent), when relock connects by
  /// an address the certificate does not name (an IP, a load balancer). Empty: the host as
  /// connected to.
  std::string server_name{};
  /// Accepts any certificate, from anyone: the traffic is encrypted, but a man in the middle can
  /// read it and the password with it. For test benches only; relock logs a warning once per
  /// client when it is on.
  bool insecure_skip_verification = false;
};

/// \copydoc config.hpp
struct config {
  /// One server: `redis://[user[:password]@]host[:port][/db][?OPTIONS]`. The password may also
  /// be given alone as `redis://:password@host`. Redis 6 ACL users need both. When the server is a
  /// master with replicas (INFO replication), lock writes wait for them (replica_sync).
  /// A Redis Cluster: redis-cluster://[user[:password]@]host:port[,host:port...][/db][?OPTIONS],
  /// naming any of its nodes (relock learns the rest from them); /db only where the cluster has
  /// numbered databases (Valkey 9's cluster-databases). A redis:// URL that reaches a cluster
  /// node is refused with the URL to use.
  /// Sentinel: redis-sentinel://[user[:password]@]host:port[,host:port...]/MASTER[?OPTIONS]: the
  /// sentinels to ask, and the name of the master they watch. The credentials are the data
  /// nodes'; the sentinels' own go in sentinel_user and sentinel_password. relock follows the
  /// master through failovers (data-layout §1, deployments).
  /// OPTIONS, joined by &: pubsub=auto|sharded|classic|both (overrides `publish`),
  /// replica_sync=auto|on|off (overrides `replica_sync`).
  /// TLS: rediss://, rediss-cluster://, rediss-sentinel:// (`tls` below; OPTIONS may add
  /// tls_ca=FILE, tls_cert=FILE, tls_key=FILE, tls_server_name=NAME, percent-encoded, and for a
  /// sentinel URL tls=both|sentinels|data when only one side of the deployment speaks TLS).
  std::string url = "redis://127.0.0.1:6379";
  /// For the rediss:// URLs.
  tls_settings tls{};

  /// The name every connection of this client gives itself (CLIENT SETNAME), so that CLIENT LIST,
  /// `relock status` and `relock top` map an owner field to its process. Empty (the default):
  /// "relock:{id}:{host}:{pid}". Otherwise a template where {id} (the client id, an owner
  /// field's first part), {host} and {pid} are replaced; no spaces or newlines (Redis refuses
  /// them). Keep {id} in it, or relock's tools cannot find the holder.
  std::string client_name{};

  /// The sentinels' credentials (Sentinel's requirepass / ACL user), when they have any: often
  /// not the data nodes', which the URL carries.
  std::string sentinel_user{};
  /// The sentinels' password, with sentinel_user.
  std::string sentinel_password{};

  /// Whether lock writes wait for replicas (replica_sync_mode); a URL's ?replica_sync= overrides.
  replica_sync_mode replica_sync = replica_sync_mode::auto_detect;
  /// How long WAIT waits for an acknowledgement. 1 s as Redisson: long enough for a replica on
  /// the same network, short enough that an acquire against a lost replica fails quickly.
  std::chrono::milliseconds replica_sync_timeout{1'000};
  /// How many times an acquire that no replica acknowledged is rolled back and tried again (and
  /// a release or renewal waits again) before it fails with errc::no_synced_replicas. 3 as
  /// Redisson's retryAttempts.
  unsigned replica_sync_attempts = 3;
  /// Also wait for the write to reach the append-only file (WAITAOF, Redis 7.2), when the master
  /// has appendonly on; never sent to a master without it, where it would fail every write.
  bool replica_sync_aof = false;

  /// The cluster form: a config whose url names these seed nodes ("host:port", any subset of the
  /// cluster's nodes). Credentials, when needed, go in the URL form.
  static config for_cluster(const std::vector<std::string>& nodes) {
    config c;
    c.url = "redis-cluster://";
    for (std::size_t i = 0; i < nodes.size(); ++i) c.url += (i ? "," : "") + nodes[i];
    return c;
  }

  /// How long to wait for TCP connect plus AUTH/SELECT/CLIENT SETNAME. 10 s matches Redisson's
  /// connectTimeout and leaves room for a busy server; an unreachable host fails fast anyway.
  std::chrono::milliseconds connect_timeout{10'000};

  /// How long one command may wait for its reply (including waiting for a reconnect) before it
  /// fails alone with errc::timeout. 3 s matches Redisson's timeout.
  std::chrono::milliseconds command_timeout{3'000};

  /// Reconnect backoff: the delay doubles from min to max, with jitter so a fleet that lost its
  /// server does not come back in lockstep.
  std::chrono::milliseconds reconnect_min_delay{50};
  /// The longest reconnect delay.
  std::chrono::milliseconds reconnect_max_delay{2'000};

  /// How long a lock outlives a holder that died. 30 s matches Redisson; the watchdog renews
  /// every watchdog_lease/3 while the holder lives.
  std::chrono::milliseconds watchdog_lease{30'000};

  /// How long a release remembers its result under redisson_unlock_latch:... so a retried
  /// release never counts twice (data-layout §1). Must cover the retry window; 20 s as Redisson.
  std::chrono::milliseconds unlock_latch_ttl{20'000};

  /// How long a completed release's latch may wait to be deleted together with others (one DEL
  /// for up to 128), instead of a DEL of its own per release as Redisson sends: a third of the
  /// commands of a lock/unlock pair, and of the client's writes and replies. The latch has done
  /// its work by then; waiting changes nothing but when it goes. 0 deletes the latches that one
  /// pass of the I/O loop completed together, right after it. 0 to 10 s, below unlock_latch_ttl.
  std::chrono::milliseconds unlock_latch_sweep_delay{10};

  /// Command connections to the server, shared by every caller of this client (subscriptions
  /// have one more of their own). With one, many threads' requests travel as one batch and
  /// client and server take turns; two let the server work on one batch while relock handles
  /// the other's replies, and still gather several callers' requests into each write. Many
  /// threads' locks measured 1.35 x the async pairs/s of 4 and 1.07 x the sync, the rest alike
  /// (bench/RESULTS.md, session 28). Redisson keeps 24 or more. A key's requests stay in order
  /// on one connection. 1 to 64.
  std::size_t command_connections = 2;

  /// While a reply is due, relock's I/O thread keeps polling (yielding the CPU between polls)
  /// for up to this long after each event before it goes to sleep. It saves the wake-up of a
  /// sleeping thread on every reply: on a VM whose idle vCPUs halt that is 40 to 90 us per round
  /// trip, and 100 us of polling halves an uncontended lock/unlock there (bench/RESULTS.md).
  /// The price is CPU: up to one round trip's worth per reply while it pays off. When replies
  /// keep arriving after the window (a slow network), it stops polling for a while by itself;
  /// with nothing in flight it never polls. 0 turns it off. 0 to 10 ms.
  std::chrono::microseconds busy_poll{100};

  /// How long a fair lock's queued waiter is presumed alive without a word from it (data-layout
  /// §3): a waiter that died while queued is dropped once this much has passed since its last try
  /// (and since the holder's lease it saw then), while it heads the queue, and those behind it
  /// move up. A live waiter's every try moves its deadline on, so only dead ones are dropped.
  /// 300 s as Redisson.
  std::chrono::milliseconds fair_lock_wait_timeout{300'000};

  /// A fair lock's head waiter told that the lock is free while nobody listens on its channel (it
  /// died, or its client lost its pub/sub connection) has this long to try again before it is
  /// dropped, instead of the whole wait timeout: so a queue left behind by a crashed fleet clears
  /// in seconds per dead waiter, not minutes (redisson/redisson#4661). A live waiter that missed
  /// the message only loses its place. relock's fair scripts also tell the head whenever a newcomer
  /// finds the lock free but the head somebody else.
  std::chrono::milliseconds fair_lock_unheard_head_timeout{5'000};

  /// How a spin lock's waiter paces its tries.
  backoff spin_backoff{};

  /// How a delayed queue packs its elements (data-layout §9): as the Redisson version that shares
  /// the queue does, since its transfer task reads only its own layout. relock's transfer reads
  /// both.
  enum class delayed_layout { redisson_4, redisson_3 };
  /// Redisson 4.x's by default.
  delayed_layout delayed_queue_layout = delayed_layout::redisson_4;

  /// The largest value a queue takes (blocking_queue::offer, delayed_queue::offer): larger ones are
  /// refused with errc::invalid_argument before any I/O. Redis's own limit is 512 MiB; a value of
  /// that size would hold a server thread and a connection for seconds. 1 byte to 512 MiB.
  std::size_t max_value_size = 16 * 1024 * 1024;

  /// Renewals per script call, when held locks share a slot (data-layout §2). 100 as Redisson.
  std::size_t renewal_batch = 100;

  /// Which pub/sub commands to use (publish_mode); a URL's ?pubsub= overrides.
  publish_mode publish = publish_mode::auto_detect;

  /// Maps every user-visible name to its key (data-layout §1), for instance to add a prefix.
  /// Identity when empty.
  std::function<std::string(std::string_view)> name_mapper{};

  /// Hears every hold this client lost: the lock's key, the owner field that had it, and why:
  /// errc::lock_lost when the hold was found gone (key deleted or expired, field removed),
  /// errc::renewal_failed when no renewal reached Redis before the hold's validity deadline
  /// (mutex::valid_until: the lease less 1% and 2 ms, from the last confirmed renewal's sending),
  /// so before its key can expire. Called on relock's I/O
  /// thread (as are the two callbacks below).
  std::function<void(std::string_view key, std::string_view owner, std::error_code why)>
      on_lock_lost{};

  /// Hears a failure of plain mutex::unlock(), which cannot throw (it runs in destructors of
  /// std::unique_lock and std::scoped_lock): not_owner, lock_lost, connection...
  std::function<void(std::string_view key, std::error_code, std::string_view detail)>
      on_unlock_error{};

  /// Hears the client's work as typed events (relock/observer.hpp): acquires with their waits and
  /// tries, releases with their hold times, renewals, losses. Null: none, at no cost. Called on
  /// relock's I/O thread, as the callbacks above and below.
  std::shared_ptr<relock::observer> observer{};

  /// Where the library's log lines go; relock never prints. Called on relock's I/O thread:
  /// keep it short and do not call back into relock synchronously from it.
  std::function<void(log_level, std::string_view)> log{};
};

}  // namespace relock
