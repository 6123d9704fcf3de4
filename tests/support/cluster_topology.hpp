// SPDX-License-Identifier: Apache-2.0
// Reading what a cluster node says about the cluster: INFO-style fields, CLUSTER NODES lines and
// CLUSTER SLOTS. Shared by redis_cluster's topology, health and migration code.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "support/redis_cluster.hpp"

namespace relock::test {

// Per command in topology and health checks: a node that does not answer in 1 s is a problem to
// report (or down), not a reason for a test to hang.
inline constexpr std::chrono::milliseconds probe_timeout{1000};

// The value of `key` in "key:value\r\n" lines (INFO, CLUSTER INFO); empty when absent.
std::string info_field(std::string_view text, std::string_view key);

// One line of CLUSTER NODES:
// <id> <ip:port@bus[,hostname]> <flags> <master id or -> <ping> <pong> <epoch> <link> <slot>...
struct nodes_line {
  std::string id;
  std::string address;  // ip:port
  std::vector<std::string> flags;
  std::string master_id;
  std::string link;
  std::vector<std::string> slots;  // "0-5460", "42", and on the node's own line "[42->-id]"
  bool has_flag(std::string_view flag) const;
};
std::vector<nodes_line> parse_cluster_nodes(std::string_view text);

// CLUSTER SLOTS as `node` answers it, sorted by slot; nodes are looked up in `cluster` by port.
// Throws std::runtime_error when the node does not answer or answers an error.
std::vector<slot_range> slot_map_of(const redis_cluster& cluster, const cluster_node& node);

// "0-5460 127.0.0.1:P1 [127.0.0.1:P4]; ...": for comparing nodes' views and for messages.
std::string describe(const std::vector<slot_range>& map);

}  // namespace relock::test
