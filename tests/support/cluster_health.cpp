// SPDX-License-Identifier: Apache-2.0
// redis_cluster: is the cluster healthy, waiting until it is, and repairing what a test left.
#include "support/cluster_topology.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

#include <map>
#include <set>
#include <stdexcept>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// What the node on `client` reports of the cluster as a whole, or the first problem.
std::string cluster_info_problem(raw_client& c, const cluster_options& options,
                                 std::size_t node_count) {
  auto info = c.command({"CLUSTER", "INFO"});
  if (!info.is_string()) return "CLUSTER INFO: " + to_string(info);
  const std::pair<const char*, std::string> expected[] = {
      {"cluster_state", "ok"},
      {"cluster_slots_assigned", "16384"},
      {"cluster_slots_ok", "16384"},
      {"cluster_known_nodes", std::to_string(node_count)},
      {"cluster_size", std::to_string(options.masters)},  // masters serving slots
  };
  for (const auto& [key, want] : expected) {
    auto got = info_field(info.str, key);
    if (got != want) return std::string(key) + ":" + got + " (expected " + want + ")";
  }
  return {};
}

// Failing or unreachable nodes and open slot migrations in the node's CLUSTER NODES.
std::string cluster_nodes_problem(raw_client& c) {
  auto nodes = c.command({"CLUSTER", "NODES"});
  if (!nodes.is_string()) return "CLUSTER NODES: " + to_string(nodes);
  for (const auto& line : parse_cluster_nodes(nodes.str)) {
    for (const char* flag : {"fail", "fail?", "handshake", "noaddr"}) {
      if (line.has_flag(flag)) return "sees " + line.address + " as " + flag;
    }
    if (line.link != "connected") return "its bus link to " + line.address + " is " + line.link;
    if (!line.has_flag("myself")) continue;
    for (const auto& s : line.slots) {
      if (s.starts_with("[")) return "has a slot migration open: " + s;
    }
  }
  return {};
}

// The shape of the slot map: the expected masters, each with all of its replicas.
std::string slot_map_problem(const std::vector<slot_range>& map, const cluster_options& options) {
  std::set<std::uint16_t> masters;
  for (const auto& r : map) {
    masters.insert(r.master.port);
    if (r.replicas.size() != static_cast<std::size_t>(options.replicas_per_master)) {
      return "slots " + std::to_string(r.first) + "-" + std::to_string(r.last) + " have " +
             std::to_string(r.replicas.size()) + " replicas";
    }
  }
  if (masters.size() != static_cast<std::size_t>(options.masters)) {
    return "CLUSTER SLOTS names " + std::to_string(masters.size()) + " masters";
  }
  return {};
}

std::string replication_problem(raw_client& c) {
  auto info = c.command({"INFO", "replication"});
  if (!info.is_string()) return "INFO replication: " + to_string(info);
  if (info_field(info.str, "role") != "slave") return {};
  if (auto link = info_field(info.str, "master_link_status"); link != "up") {
    return "master_link_status:" + link;
  }
  if (info_field(info.str, "master_sync_in_progress") != "0") return "still syncing its master";
  return {};
}

}  // namespace

std::string redis_cluster::health_problem() const {
  std::string reference_map;
  const cluster_node* reference = nullptr;
  for (const auto& n : nodes_) {
    const auto where = n.address() + ": ";
    try {
      auto c = client(n, probe_timeout);
      if (auto p = cluster_info_problem(c, options_, nodes_.size()); !p.empty()) return where + p;
      if (auto p = cluster_nodes_problem(c); !p.empty()) return where + p;
      if (auto p = atomic_migration_problem(c); !p.empty()) return where + p;
      auto map = slot_map_of(*this, n);
      if (auto p = slot_map_problem(map, options_); !p.empty()) return where + p;
      auto described = describe(map);
      if (reference == nullptr) {
        reference = &n;
        reference_map = described;
      } else if (described != reference_map) {
        return where + "CLUSTER SLOTS " + described + " differs from " + reference->address() +
               "'s " + reference_map;
      }
      if (auto p = replication_problem(c); !p.empty()) return where + p;
    } catch (const std::runtime_error& e) {
      return where + e.what();
    }
  }
  return {};
}

void redis_cluster::wait_healthy(std::chrono::milliseconds timeout) const {
  std::string problem;
  if (wait_until([&] { return (problem = health_problem()).empty(); }, timeout, 20ms)) return;
  throw std::runtime_error("the cluster is not healthy after " + std::to_string(timeout.count()) +
                           " ms: " + problem);
}

void redis_cluster::restore(std::chrono::milliseconds timeout) {
  for (const auto& n : stopped()) restart(n);
  cancel_atomic_migrations();  // the slot stays with its source
  close_open_migrations();
  wait_healthy(timeout);
}

void redis_cluster::close_open_migrations() {
  struct open_slot {
    std::uint16_t slot;
    cluster_node self;
    std::string self_id, peer_id;
  };
  std::vector<open_slot> migrating, importing;
  std::map<std::string, cluster_node> by_id;
  for (const auto& n : nodes_) {
    auto reply = client(n, probe_timeout).command({"CLUSTER", "NODES"});
    for (const auto& line : parse_cluster_nodes(reply.str)) {
      auto port = line.address.substr(line.address.rfind(':') + 1);
      by_id.emplace(line.id, node(static_cast<std::uint16_t>(std::stoi(port))));
      // A master's own: Valkey passes SETSLOT on to the replicas, whose CLUSTER NODES then show
      // their master's open migration too, and they refuse MIGRATE and SETSLOT.
      if (!line.has_flag("myself") || !line.has_flag("master")) continue;
      // "[42->-<target id>]" on the source, "[42-<-<source id>]" on the target.
      for (const auto& s : line.slots) {
        if (!s.starts_with("[") || s.size() < 6) continue;
        auto arrow = s.find("-", 1);
        open_slot o{static_cast<std::uint16_t>(std::stoi(s.substr(1, arrow - 1))), n, line.id,
                    s.substr(arrow + 3, s.size() - arrow - 4)};
        (s.compare(arrow, 3, "->-") == 0 ? migrating : importing).push_back(o);
      }
    }
  }
  std::set<std::uint16_t> finished;
  for (const auto& o : migrating) {
    slot_migration m{o.slot, o.self, by_id.at(o.peer_id), o.self_id, o.peer_id};
    // The target must be importing for MIGRATE to land; it may have been restarted since.
    client(m.to).command({"CLUSTER", "SETSLOT", std::to_string(m.slot), "IMPORTING", m.from_id});
    finish_migration(m);
    finished.insert(o.slot);
  }
  for (const auto& o : importing) {
    if (finished.count(o.slot)) continue;
    client(o.self).command({"CLUSTER", "SETSLOT", std::to_string(o.slot), "STABLE"});
  }
}

}  // namespace relock::test
