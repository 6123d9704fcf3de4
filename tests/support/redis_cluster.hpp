// SPDX-License-Identifier: Apache-2.0
// A Redis Cluster for tests: 3 masters + 3 replicas, real redis-server processes on loopback.
// Under ctest it is started once and shared by every cluster test (the "cluster" CTest fixture:
// tests/cluster_keeper owns the servers, $RELOCK_CLUSTER_STATE names its state file); a cluster
// test binary run by hand starts a private one instead. Tests talk to nodes directly with
// raw_client (not cluster-aware: address the node that owns the key) and give the library
// seed_url().
//
// Shared means one test's changes are the next test's starting point, so:
// - a test that kills a node restarts it and calls wait_healthy() before it ends;
// - a test that begins a slot migration (step by step or atomic) finishes it (moving the slot
//   back is not needed: ask owner_of() instead of assuming where a slot lives);
// - restore() in SetUp() repairs what a failed test left (dead nodes, open or atomic
//   migrations in flight), so one failure does not fail every test after it.
// Cluster tests run one at a time (CTest RESOURCE_LOCK), never beside one that kills a master.
//
// Thread-safety: none; drive it from the test's main thread. In a private cluster the servers
// die with the thread that started them (server_process), so restart() nodes from that thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cluster_nodes.hpp"
#include "support/raw_client.hpp"

namespace relock::test {

// What a node says it is (ROLE) right now; down when it does not answer.
enum class node_role { master, replica, down };

// One line of CLUSTER SLOTS: slots first..last (inclusive) served by `master`.
struct slot_range {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  cluster_node master{};
  std::vector<cluster_node> replicas{};
};

// A slot on its way from one master to another: begin_migration() makes it, the other steps
// take it. Between the steps the slot is live-migrating: the source answers ASK for keys it no
// longer has, the target serves them after ASKING.
struct slot_migration {
  std::uint16_t slot = 0;
  cluster_node from{};
  cluster_node to{};
  std::string from_id{};  // CLUSTER MYID of each
  std::string to_id{};
};

// Where begin_atomic_migration() stops an atomic migration until finish_atomic_migration(), by
// Valkey's DEBUG SLOTMIGRATION switches (the fixture's nodes allow DEBUG from loopback).
enum class cutover_hold {
  none,  // runs to its end unheld
  // The target holds a copy of the slot's keys, hidden, and receives every write the source
  // still serves: the source keeps the slot, as long as it is held.
  streaming,
  // The cutover: the source pauses every client write (to any slot: the pause is the node's)
  // and the target has been granted the slot but does not take it yet. Writes sent now wait
  // on the source and are answered MOVED once the target takes the slot. Held at most ~9 s:
  // the source's pause ends after 2 x cluster-manual-failover-timeout (5 s), and with it the
  // migration, failed.
  cutover,
};

// An atomic migration (Valkey 9's CLUSTER MIGRATESLOTS) of one slot: begin_atomic_migration()
// starts it, finish_atomic_migration() waits for its end.
struct atomic_migration {
  std::uint16_t slot = 0;
  cluster_node from{};
  cluster_node to{};
  std::string job{};  // its name in CLUSTER GETSLOTMIGRATIONS, on both ends
  cutover_hold hold = cutover_hold::none;
};

class redis_cluster {
 public:
  // Starts a private cluster owned by this object; returns once it is healthy. Throws
  // std::runtime_error with the failing log when it does not come up.
  explicit redis_cluster(cluster_options options = {});
  // The cluster a keeper runs, from its state file. Throws std::runtime_error when the file is
  // missing or its keeper is gone.
  static redis_cluster attach(const std::filesystem::path& state_file);
  ~redis_cluster();
  redis_cluster(redis_cluster&&) noexcept;
  redis_cluster& operator=(redis_cluster&&) noexcept;

  const cluster_options& options() const { return options_; }
  // Every node, down or not, in a fixed order; pids are updated by restart().
  const std::vector<cluster_node>& nodes() const { return nodes_; }
  // The node on `port`; throws std::invalid_argument when there is none.
  const cluster_node& node(std::uint16_t port) const;
  // "redis-cluster://127.0.0.1:P1,127.0.0.1:P2,..." naming every node.
  std::string seed_url() const;
  // With TLS (cluster_options::tls_cert_file): "rediss-cluster://HOST:TLS_PORT,..." naming
  // every node by `host` at its TLS port.
  std::string tls_seed_url(const std::string& host = "127.0.0.1") const;
  // A new connection to `node`.
  raw_client client(const cluster_node& node,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // ---- Topology, asked of the servers at each call (it changes with failovers) ----
  node_role role(const cluster_node& node) const;
  std::vector<cluster_node> masters() const;   // nodes whose ROLE is master
  std::vector<cluster_node> replicas() const;  // nodes whose ROLE is replica
  // The master a replica replicates, by its ROLE; none when it is not a replica.
  std::optional<cluster_node> master_of(const cluster_node& replica) const;
  // The replicas of a master, by their ROLE.
  std::vector<cluster_node> replicas_of(const cluster_node& master) const;
  // CLUSTER SLOTS of the first node that answers, sorted by slot.
  std::vector<slot_range> slot_map() const;
  // The slots `master` serves, by slot_map().
  std::size_t slot_count(const cluster_node& master) const;
  // CLUSTER KEYSLOT, asked of a node: the server's answer, not the library's.
  std::uint16_t slot_of(std::string_view key) const;
  // The master serving `slot` / `key`; throws std::runtime_error if no node serves it.
  cluster_node owner_of_slot(std::uint16_t slot) const;
  cluster_node owner_of(std::string_view key) const { return owner_of_slot(slot_of(key)); }

  // ---- Failures ----
  // SIGKILL, as a crash would; the node's replica takes over after node_timeout and an
  // election (wait_until_promoted). Idempotent.
  void kill(const cluster_node& node);
  // Runs a killed node again on its port and dir; it rejoins with its nodes.conf (a former
  // master as a replica of the one promoted in its place) and syncs. Returns once it answers,
  // not once it rejoined: call wait_healthy(). Throws std::logic_error if it still runs.
  void restart(const cluster_node& node);
  // The node's server process runs.
  bool running(const cluster_node& node) const;
  // True once `replica` reports itself master, serving slots, with cluster_state:ok; false
  // after `timeout`.
  bool wait_until_promoted(const cluster_node& replica, std::chrono::milliseconds timeout) const;

  // ---- Health ----
  // Empty when every node answers, reports cluster_state:ok with all 16384 slots served and
  // every node known and connected, sees no node failing and no slot migrating (step by step,
  // or atomically where the server has that), all nodes return the same CLUSTER SLOTS (with
  // options().masters masters each with its replicas), and every replica's link to its master
  // is up and synced. Otherwise the first problem.
  std::string health_problem() const;
  // Waits until health_problem() is empty; throws std::runtime_error naming the problem
  // after `timeout`.
  void wait_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Restarts nodes that are down, cancels atomic migrations in flight (the slot stays with its
  // source) and finishes step-by-step ones left open, then wait_healthy().
  void restore(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // ---- Slot migration (the steps of redis-cli --cluster reshard, one at a time) ----
  // CLUSTER SETSLOT IMPORTING on `to`, then MIGRATING on `from`.
  slot_migration begin_migration(std::uint16_t slot, const cluster_node& from,
                                 const cluster_node& to);
  // MIGRATEs up to `max_keys` of the slot's keys from the source to the target (CLUSTER
  // GETKEYSINSLOT, in batches); returns how many moved. Throws std::runtime_error on an error.
  std::size_t move_keys(const slot_migration& m,
                        std::size_t max_keys = std::numeric_limits<std::size_t>::max());
  // Moves the keys left, then CLUSTER SETSLOT NODE on the target, the source and the other
  // masters; returns once every node's CLUSTER SLOTS names the target (10 s at most).
  void finish_migration(const slot_migration& m);
  // All three steps.
  void migrate_slot(std::uint16_t slot, const cluster_node& from, const cluster_node& to);

  // ---- Atomic slot migration (Valkey 9: CLUSTER MIGRATESLOTS, sent to the source) ----
  // The source sends the slot's keys as a whole and then every write to them; the target hides
  // them until the cutover, when the source pauses writes briefly, the target takes the slot,
  // and the source answers MOVED from then on. No ASK, no TRYAGAIN, no half-moved slot.
  //
  // Empty when the servers have CLUSTER MIGRATESLOTS; else why not, in the server's words (a
  // test's GTEST_SKIP reason). Asked once of a node (COMMAND INFO cluster|migrateslots), never
  // inferred from a version.
  std::string atomic_migration_missing() const;
  bool has_atomic_migration() const { return atomic_migration_missing().empty(); }
  // Starts moving `slot` from `from` (its master) to `to`; with a hold, returns once the
  // migration waits there (10 s at most), else at once. Throws std::runtime_error when the
  // source refuses (its error) or the migration fails or does not get there in time.
  atomic_migration begin_atomic_migration(std::uint16_t slot, const cluster_node& from,
                                          const cluster_node& to,
                                          cutover_hold hold = cutover_hold::none);
  // Lets a held migration go on; returns once the source reports it done and every node's
  // CLUSTER SLOTS names the target (10 s at most). Throws std::runtime_error, with the
  // migration's own message, when it failed or was cancelled, or at the deadline.
  void finish_atomic_migration(const atomic_migration& m);
  // Both, unheld.
  void migrate_slot_atomically(std::uint16_t slot, const cluster_node& from,
                               const cluster_node& to);
  // The migration's state on its source, as CLUSTER GETSLOTMIGRATIONS says it
  // ("waiting-to-pause", "failover-granted", "success", "failed", "cancelled"...); empty when
  // the source no longer lists it.
  std::string atomic_migration_state(const atomic_migration& m) const;

 private:
  struct attached {};
  redis_cluster(attached, cluster_options options, std::vector<cluster_node> nodes,
                std::string control);
  std::string node_id(const cluster_node& node) const;
  std::vector<cluster_node> stopped() const;  // nodes whose server does not run
  void close_open_migrations();
  // The atomic migrations in progress that `node` lists, or empty (also on a server without
  // them): for health_problem().
  std::string atomic_migration_problem(raw_client& node) const;
  // Cancels the atomic migrations in progress (on their sources), waits until no node lists
  // one, and turns the holds' DEBUG switches off on every node: for restore().
  void cancel_atomic_migrations();
  void agree_on_owner(std::uint16_t slot, const cluster_node& to) const;

  cluster_options options_;
  std::unique_ptr<cluster_nodes> owned_;  // a private cluster
  std::string control_;                   // else the keeper's socket
  std::vector<cluster_node> nodes_;
  mutable std::optional<std::string> atomic_migration_missing_;  // probed once
};

// The cluster the tests of this process share: the keeper's when $RELOCK_CLUSTER_STATE is set
// (ctest), else a private one started on first use and stopped at exit. Throws
// std::runtime_error (failing the calling test) when neither works.
redis_cluster& shared_cluster();

}  // namespace relock::test
