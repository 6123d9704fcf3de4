// SPDX-License-Identifier: Apache-2.0
// Joining started cluster-mode redis-servers into one Redis Cluster with
// `redis-cli --cluster create`, as both `relock demo --cluster` and the tests' cluster do: it
// assigns the 16384 slots evenly, pairs replicas with masters on other hosts where it can, and
// waits for the nodes to agree on the configuration before it exits.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace relock::process {

struct cluster_create {
  std::filesystem::path redis_cli{};  // run by this path (find_on_path finds it)
  // "HOST:PORT" of each node: empty, answering, cluster-enabled. redis-cli makes the first
  // nodes.size() / (1 + replicas_per_master) of them masters.
  std::vector<std::string> nodes{};
  int replicas_per_master = 0;
  std::filesystem::path log{};  // redis-cli's output, appended
  // redis-cli polls once a second for the nodes to agree: a create takes 1-3 s.
  std::chrono::milliseconds timeout{60'000};
};

struct cluster_created {
  bool ok = false;
  bool timed_out = false;  // redis-cli did not exit in time and was killed
  std::string problem{};   // empty when ok; "exited with status 1", "did not finish within 60 s"
};

// Runs redis-cli and waits for it to exit. The cluster is joined, not yet healthy: replicas may
// still sync, and nodes other than the one redis-cli asked last may not say cluster_state:ok yet.
// Throws what spawn() throws when redis-cli cannot be started (exec_error: not there).
cluster_created create_cluster(const cluster_create& request);

}  // namespace relock::process
