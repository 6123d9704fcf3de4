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
// - a test that begins a slot migration finishes it (moving the slot back is not needed: ask
//   owner_of() instead of assuming where a slot lives);
// - restore() in SetUp() repairs what a failed test left (dead nodes, open migrations), so one
//   failure does not fail every test after it.
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
  // every node known and connected, sees no node failing and no slot migrating, all nodes
  // return the same CLUSTER SLOTS (with options().masters masters each with its replicas),
  // and every replica's link to its master is up and synced. Otherwise the first problem.
  std::string health_problem() const;
  // Waits until health_problem() is empty; throws std::runtime_error naming the problem
  // after `timeout`.
  void wait_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Restarts nodes that are down, finishes slot migrations left open, then wait_healthy().
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

 private:
  struct attached {};
  redis_cluster(attached, cluster_options options, std::vector<cluster_node> nodes,
                std::string control);
  std::string node_id(const cluster_node& node) const;
  std::vector<cluster_node> stopped() const;  // nodes whose server does not run
  void close_open_migrations();

  cluster_options options_;
  std::unique_ptr<cluster_nodes> owned_;  // a private cluster
  std::string control_;                   // else the keeper's socket
  std::vector<cluster_node> nodes_;
};

// The cluster the tests of this process share: the keeper's when $RELOCK_CLUSTER_STATE is set
// (ctest), else a private one started on first use and stopped at exit. Throws
// std::runtime_error (failing the calling test) when neither works.
redis_cluster& shared_cluster();

}  // namespace relock::test
