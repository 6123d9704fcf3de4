// SPDX-License-Identifier: Apache-2.0
// The processes of a test Redis Cluster: masters and replicas on free loopback ports, each in its
// own dir under one temp dir, joined by `redis-cli --cluster create`. Owned by the cluster keeper
// (tests/cluster_keeper) for a ctest run, or by a private redis_cluster; tests use redis_cluster.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace relock::test {

struct cluster_options {
  // 3 masters is the smallest cluster in which the others still form a majority to fail one
  // over; one replica each so that every master can be failed over.
  int masters = 3;
  int replicas_per_master = 1;
  // cluster-node-timeout: a node silent this long is suspected, and a failover takes about
  // twice this plus the replica's election delay (0.5-1 s). Low so failover tests are quick,
  // yet well above the pauses of a loaded CI machine, which must not fail a node over.
  std::chrono::milliseconds node_timeout{500};
  // TLS beside each node's plain port, which the tests' raw clients and redis-cli keep using: a
  // tls-port per node (cluster_node::tls_port) with these PEM files, and tls-cluster and
  // tls-replication on, so the bus, the replication and the TLS clients' MOVED use TLS ports.
  // Private clusters only: the keeper's state file does not carry these.
  std::string tls_cert_file{};
  std::string tls_key_file{};
  std::string tls_ca_file{};
  // Raw redis.conf lines for every node, after the cluster's own
  // (e.g. "cluster-announce-hostname localhost").
  std::vector<std::string> extra_config{};
};

// One node as the tests see it. `pid` is the server process when the node was last started.
struct cluster_node {
  std::string host;
  std::uint16_t port = 0;
  pid_t pid = -1;
  std::filesystem::path dir;
  // With cluster_options::tls_cert_file: the node's TLS port, else 0.
  std::uint16_t tls_port = 0;

  // "127.0.0.1:PORT", as CLUSTER SLOTS, MOVED and ASK name it.
  std::string address() const { return host + ":" + std::to_string(port); }
};

// Thread-safety: none. The servers die with the thread that started them (PR_SET_PDEATHSIG, see
// server_process): create this, and restart nodes, on a thread that outlives the cluster.
class cluster_nodes {
 public:
  // Starts masters * (1 + replicas_per_master) servers, each on a port whose cluster bus port
  // (port + 10000) is free too, and creates the cluster. Returns once redis-cli has, which is
  // not yet healthy (replicas may still sync): redis_cluster waits for that. Throws
  // std::runtime_error with the end of the failing log.
  explicit cluster_nodes(const cluster_options& options);
  // SIGKILLs and reaps every server, then removes the dir.
  ~cluster_nodes();
  cluster_nodes(const cluster_nodes&) = delete;
  cluster_nodes& operator=(const cluster_nodes&) = delete;

  const cluster_options& options() const { return options_; }
  const std::vector<cluster_node>& nodes() const { return nodes_; }
  // The dir holding one dir per node (redis.conf, redis.log, nodes.conf) and create.log.
  const std::filesystem::path& dir() const { return dir_.path(); }

  // The node's server still runs. Throws std::invalid_argument for a port that is no node's.
  bool running(std::uint16_t port);
  // SIGKILL, as a crash would, and reap; idempotent.
  void kill(std::uint16_t port);
  // Runs a stopped node again on its port and dir, with its nodes.conf, so it rejoins the
  // cluster as the node it was (its data is gone). Returns once it answers, with its new PID.
  // Throws std::logic_error if it still runs, std::runtime_error if it does not come up.
  pid_t restart(std::uint16_t port);
  std::string log_tail(std::uint16_t port, std::size_t lines = 40) const;

 private:
  enum class launch_result { ready, port_in_use };
  std::size_t index_of(std::uint16_t port) const;
  launch_result launch(std::size_t i);
  void create_cluster();

  cluster_options options_;
  std::filesystem::path server_program_;
  std::filesystem::path cli_program_;
  temp_dir dir_;  // declared before the processes: they die before their dirs go
  std::vector<cluster_node> nodes_;
  std::deque<server_process> processes_;  // nodes_[i] runs as processes_[i]
};

}  // namespace relock::test
