// SPDX-License-Identifier: Apache-2.0
// redis_cluster: moving a slot between masters step by step, as `redis-cli --cluster reshard`
// does (https://redis.io/commands/cluster-setslot/), so tests can act between the steps.
#include "support/cluster_topology.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

#include <algorithm>
#include <stdexcept>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Keys per CLUSTER GETKEYSINSLOT + MIGRATE round, as redis-cli's default pipeline.
constexpr std::size_t batch = 100;
constexpr auto migrate_timeout = 5s;
// SETSLOT NODE reaches the nodes it is not sent to (replicas) by gossip, within a few pings.
constexpr auto agreement_timeout = 10s;

void expect_ok(const resp::reply& r, const cluster_node& node, const std::string& what) {
  if (r.is_error() || !r.is_string()) {
    throw std::runtime_error(node.address() + ": " + what + ": " + to_string(r));
  }
}

}  // namespace

slot_migration redis_cluster::begin_migration(std::uint16_t slot, const cluster_node& from,
                                              const cluster_node& to) {
  slot_migration m{slot, from, to, node_id(from), node_id(to)};
  const auto s = std::to_string(slot);
  // The target first: once the source says MIGRATING, clients are sent (ASK) to the target,
  // which must then accept them.
  expect_ok(client(to).command({"CLUSTER", "SETSLOT", s, "IMPORTING", m.from_id}), to,
            "SETSLOT " + s + " IMPORTING");
  expect_ok(client(from).command({"CLUSTER", "SETSLOT", s, "MIGRATING", m.to_id}), from,
            "SETSLOT " + s + " MIGRATING");
  return m;
}

std::size_t redis_cluster::move_keys(const slot_migration& m, std::size_t max_keys) {
  auto source = client(m.from);
  const auto s = std::to_string(m.slot);
  std::size_t moved = 0;
  while (moved < max_keys) {
    const auto count = std::min(batch, max_keys - moved);
    auto keys = source.command({"CLUSTER", "GETKEYSINSLOT", s, std::to_string(count)});
    if (!keys.is_array()) {
      throw std::runtime_error(m.from.address() + ": GETKEYSINSLOT " + s + ": " + to_string(keys));
    }
    if (keys.elements.empty()) break;
    // With tls-cluster the source opens MIGRATE's connection with TLS: to the TLS port, else
    // it greets the plain port with a ClientHello and times out (IOERR) whenever a key is left
    // in the slot to move.
    const auto port = m.to.tls_port != 0 ? m.to.tls_port : m.to.port;
    std::vector<std::string> migrate{
        "MIGRATE", m.to.host, std::to_string(port),
        "",        "0",       std::to_string(migrate_timeout.count() * 1000),
        "KEYS"};
    for (const auto& k : keys.elements) migrate.push_back(k.str);
    expect_ok(source.command(migrate), m.from, "MIGRATE of slot " + s + " to " + m.to.address());
    moved += keys.elements.size();
  }
  return moved;
}

void redis_cluster::finish_migration(const slot_migration& m) {
  // The source refuses SETSLOT NODE while it still holds keys of the slot.
  move_keys(m);
  const auto s = std::to_string(m.slot);
  auto assign = [&](const cluster_node& n) {
    expect_ok(client(n).command({"CLUSTER", "SETSLOT", s, "NODE", m.to_id}), n,
              "SETSLOT " + s + " NODE");
  };
  // The target first, which bumps its config epoch so its claim wins; then the source, which
  // from then on answers MOVED; then the other masters, so none redirects to the old owner.
  assign(m.to);
  assign(m.from);
  for (const auto& n : masters()) {
    if (n.port != m.from.port && n.port != m.to.port) assign(n);
  }
  auto agreed = [&] {
    for (const auto& n : nodes_) {
      if (role(n) == node_role::down) continue;
      try {
        auto map = slot_map_of(*this, n);
        auto r = std::find_if(map.begin(), map.end(),
                              [&](const auto& r) { return r.first <= m.slot && m.slot <= r.last; });
        if (r == map.end() || r->master.port != m.to.port) return false;
      } catch (const std::runtime_error&) {
        return false;
      }
    }
    return true;
  };
  if (!wait_until(agreed, agreement_timeout, 10ms)) {
    throw std::runtime_error("slot " + s + " moved to " + m.to.address() +
                             ", but not every node says so after " +
                             std::to_string(agreement_timeout.count()) + " s");
  }
}

void redis_cluster::migrate_slot(std::uint16_t slot, const cluster_node& from,
                                 const cluster_node& to) {
  finish_migration(begin_migration(slot, from, to));
}

}  // namespace relock::test
