// SPDX-License-Identifier: Apache-2.0
#include "support/redis_cluster.hpp"

#include "support/cluster_state.hpp"
#include "support/cluster_topology.hpp"
#include "support/wait.hpp"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Creating the cluster and syncing the replicas takes 2-4 s; a loaded CI machine may be slow.
constexpr auto startup_timeout = 60s;

}  // namespace

redis_cluster::redis_cluster(cluster_options options)
    : options_(options), owned_(std::make_unique<cluster_nodes>(options)), nodes_(owned_->nodes()) {
  wait_healthy(startup_timeout);
}

redis_cluster::redis_cluster(attached, cluster_options options, std::vector<cluster_node> nodes,
                             std::string control)
    : options_(options), control_(std::move(control)), nodes_(std::move(nodes)) {}

redis_cluster redis_cluster::attach(const std::filesystem::path& state_file) {
  if (!std::filesystem::exists(state_file)) {
    throw std::runtime_error(
        "no cluster state at " + state_file.string() +
        ": under ctest the 'cluster' fixture test (cluster_fixture_setup) writes it before the "
        "cluster tests run; by hand, unset RELOCK_CLUSTER_STATE for a private cluster");
  }
  auto state = read_cluster_state(state_file);
  if (!keeper_running(state)) {
    throw std::runtime_error("the cluster keeper (pid " + std::to_string(state.keeper_pid) +
                             ") of " + state_file.string() +
                             " is gone; its log is next to it (.log)");
  }
  return redis_cluster(attached{}, state.options, std::move(state.nodes), state.control);
}

redis_cluster::~redis_cluster() = default;
redis_cluster::redis_cluster(redis_cluster&&) noexcept = default;
redis_cluster& redis_cluster::operator=(redis_cluster&&) noexcept = default;

const cluster_node& redis_cluster::node(std::uint16_t port) const {
  for (const auto& n : nodes_) {
    if (n.port == port) return n;
  }
  throw std::invalid_argument("no cluster node on port " + std::to_string(port));
}

std::string redis_cluster::seed_url() const {
  std::string url = "redis-cluster://";
  for (const auto& n : nodes_) {
    if (&n != &nodes_.front()) url += ',';
    url += n.address();
  }
  return url;
}

std::string redis_cluster::tls_seed_url(const std::string& host) const {
  std::string url = "rediss-cluster://";
  for (const auto& n : nodes_) {
    if (&n != &nodes_.front()) url += ',';
    url += host + ":" + std::to_string(n.tls_port);
  }
  return url;
}

raw_client redis_cluster::client(const cluster_node& node,
                                 std::chrono::milliseconds timeout) const {
  return raw_client(node.host, node.port, {}, {}, timeout);
}

node_role redis_cluster::role(const cluster_node& node) const {
  try {
    auto r = client(node, probe_timeout).command({"ROLE"});
    if (r.is_array() && !r.elements.empty()) {
      if (r.elements[0].str == "master") return node_role::master;
      if (r.elements[0].str == "slave") return node_role::replica;
    }
  } catch (const std::runtime_error&) {
  }
  return node_role::down;
}

std::vector<cluster_node> redis_cluster::masters() const {
  std::vector<cluster_node> found;
  for (const auto& n : nodes_) {
    if (role(n) == node_role::master) found.push_back(n);
  }
  return found;
}

std::vector<cluster_node> redis_cluster::replicas() const {
  std::vector<cluster_node> found;
  for (const auto& n : nodes_) {
    if (role(n) == node_role::replica) found.push_back(n);
  }
  return found;
}

std::optional<cluster_node> redis_cluster::master_of(const cluster_node& replica) const {
  try {
    // ["slave", master host, master port, link state, offset]
    auto r = client(replica, probe_timeout).command({"ROLE"});
    if (r.is_array() && r.elements.size() >= 3 && r.elements[0].str == "slave") {
      return node(static_cast<std::uint16_t>(r.elements[2].integer));
    }
  } catch (const std::runtime_error&) {
  }
  return std::nullopt;
}

std::vector<cluster_node> redis_cluster::replicas_of(const cluster_node& master) const {
  std::vector<cluster_node> found;
  for (const auto& n : nodes_) {
    auto m = master_of(n);
    if (m && m->port == master.port) found.push_back(n);
  }
  return found;
}

std::vector<slot_range> redis_cluster::slot_map() const {
  std::string problems;
  for (const auto& n : nodes_) {
    try {
      return slot_map_of(*this, n);
    } catch (const std::runtime_error& e) {
      problems += std::string("\n  ") + e.what();
    }
  }
  throw std::runtime_error("no cluster node returned CLUSTER SLOTS:" + problems);
}

std::size_t redis_cluster::slot_count(const cluster_node& master) const {
  std::size_t count = 0;
  for (const auto& r : slot_map()) {
    if (r.master.port == master.port) count += r.last - r.first + 1u;
  }
  return count;
}

std::uint16_t redis_cluster::slot_of(std::string_view key) const {
  for (const auto& n : nodes_) {
    try {
      auto r = client(n, probe_timeout).command({"CLUSTER", "KEYSLOT", std::string(key)});
      if (r.is_integer()) return static_cast<std::uint16_t>(r.integer);
    } catch (const std::runtime_error&) {
    }
  }
  throw std::runtime_error("no cluster node answered CLUSTER KEYSLOT");
}

cluster_node redis_cluster::owner_of_slot(std::uint16_t slot) const {
  for (const auto& r : slot_map()) {
    if (r.first <= slot && slot <= r.last) return r.master;
  }
  throw std::runtime_error("no cluster node serves slot " + std::to_string(slot));
}

std::string redis_cluster::node_id(const cluster_node& node) const {
  auto r = client(node).command({"CLUSTER", "MYID"});
  if (!r.is_string()) throw std::runtime_error(node.address() + ": CLUSTER MYID: " + to_string(r));
  return r.str;
}

void redis_cluster::kill(const cluster_node& node) {
  const auto port = this->node(node.port).port;
  if (owned_) {
    owned_->kill(port);
  } else {
    keeper_request(control_, "kill " + std::to_string(port));
  }
}

void redis_cluster::restart(const cluster_node& node) {
  for (auto& n : nodes_) {
    if (n.port != node.port) continue;
    if (owned_) {
      n.pid = owned_->restart(n.port);
    } else {
      n.pid = std::stoi(keeper_request(control_, "restart " + std::to_string(n.port)));
    }
    return;
  }
  throw std::invalid_argument("no cluster node on port " + std::to_string(node.port));
}

bool redis_cluster::running(const cluster_node& node) const {
  const auto port = this->node(node.port).port;
  for (const auto& n : stopped()) {
    if (n.port == port) return false;
  }
  return true;
}

std::vector<cluster_node> redis_cluster::stopped() const {
  std::vector<cluster_node> found;
  if (owned_) {
    for (const auto& n : nodes_) {
      if (!owned_->running(n.port)) found.push_back(n);
    }
    return found;
  }
  // One request for all: " PORT:PID:up PORT:PID:down ..."
  std::istringstream reply(keeper_request(control_, "nodes"));
  for (std::string entry; reply >> entry;) {
    if (entry.ends_with(":down")) {
      found.push_back(
          node(static_cast<std::uint16_t>(std::stoi(entry.substr(0, entry.find(':'))))));
    }
  }
  return found;
}

bool redis_cluster::wait_until_promoted(const cluster_node& replica,
                                        std::chrono::milliseconds timeout) const {
  auto promoted = [&] {
    if (role(replica) != node_role::master) return false;
    try {
      auto c = client(replica, probe_timeout);
      if (info_field(c.command({"CLUSTER", "INFO"}).str, "cluster_state") != "ok") return false;
      for (const auto& r : slot_map_of(*this, replica)) {
        if (r.master.port == replica.port) return true;
      }
    } catch (const std::runtime_error&) {
    }
    return false;
  };
  return wait_until(promoted, timeout, 10ms);
}

redis_cluster& shared_cluster() {
  static redis_cluster cluster = [] {
    const char* state = std::getenv("RELOCK_CLUSTER_STATE");
    if (state != nullptr && *state != '\0') return redis_cluster::attach(state);
    return redis_cluster();
  }();
  return cluster;
}

}  // namespace relock::test
