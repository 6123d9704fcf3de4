// SPDX-License-Identifier: Apache-2.0
// redis_cluster: moving a slot between masters step by step, as `redis-cli --cluster reshard`
// does (https://redis.io/commands/cluster-setslot/), so tests can act between the steps; and
// atomically, as Valkey 9 does it itself (https://valkey.io/topics/atomic-slot-migration/),
// held where a test wants to act.
#include "support/cluster_topology.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

#include <algorithm>
#include <map>
#include <set>
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

// An atomic migration runs for tens of ms here (a few keys, loopback); a held one gets to its
// hold as quickly. Generous for a loaded machine.
constexpr auto atomic_timeout = 10s;

// One entry of CLUSTER GETSLOTMIGRATIONS: name, operation (EXPORT on the source, IMPORT on the
// target and its replicas), slot_ranges, state, message...
using migration_fields = std::map<std::string, std::string>;

// What `node` lists, finished ones included (the last cluster-slot-migration-log-max-len).
std::vector<migration_fields> slot_migrations(raw_client& node) {
  auto r = node.command({"CLUSTER", "GETSLOTMIGRATIONS"});
  if (!r.is_array()) {
    throw std::runtime_error(node.host() + ":" + std::to_string(node.port()) +
                             ": CLUSTER GETSLOTMIGRATIONS: " + to_string(r));
  }
  std::vector<migration_fields> found;
  for (const auto& entry : r.elements) {
    migration_fields fields;
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
      const auto& value = entry.elements[i + 1];
      fields[entry.elements[i].str] =
          value.is_integer() ? std::to_string(value.integer) : value.str;
    }
    found.push_back(std::move(fields));
  }
  return found;
}

bool finished(const std::string& state) {
  return state == "success" || state == "failed" || state == "cancelled";
}

// The DEBUG SLOTMIGRATION switch that holds a migration there, and the node it is set on.
const char* hold_switch(cutover_hold hold) {
  return hold == cutover_hold::streaming ? "PREVENT-PAUSE" : "PREVENT-FAILOVER";
}
const cluster_node& hold_node(const atomic_migration& m) {
  // The source would pause writes, the target would take the slot.
  return m.hold == cutover_hold::streaming ? m.from : m.to;
}

// The source's state of a held migration while it waits at its hold.
const char* held_state(cutover_hold hold) {
  return hold == cutover_hold::streaming ? "waiting-to-pause" : "failover-granted";
}

std::string describe_migration(const atomic_migration& m) {
  return "atomic migration of slot " + std::to_string(m.slot) + " from " + m.from.address() +
         " to " + m.to.address();
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
  agree_on_owner(m.slot, m.to);
}

void redis_cluster::agree_on_owner(std::uint16_t slot, const cluster_node& to) const {
  auto agreed = [&] {
    for (const auto& n : nodes_) {
      if (role(n) == node_role::down) continue;
      try {
        auto map = slot_map_of(*this, n);
        auto r = std::find_if(map.begin(), map.end(),
                              [&](const auto& r) { return r.first <= slot && slot <= r.last; });
        if (r == map.end() || r->master.port != to.port) return false;
      } catch (const std::runtime_error&) {
        return false;
      }
    }
    return true;
  };
  if (!wait_until(agreed, agreement_timeout, 10ms)) {
    throw std::runtime_error("slot " + std::to_string(slot) + " moved to " + to.address() +
                             ", but not every node says so after " +
                             std::to_string(agreement_timeout.count()) + " s");
  }
}

void redis_cluster::migrate_slot(std::uint16_t slot, const cluster_node& from,
                                 const cluster_node& to) {
  finish_migration(begin_migration(slot, from, to));
}

std::string redis_cluster::atomic_migration_missing() const {
  if (atomic_migration_missing_) return *atomic_migration_missing_;
  std::string problems;
  for (const auto& n : nodes_) {
    resp::reply r;
    try {
      r = client(n, probe_timeout).command({"COMMAND", "INFO", "cluster|migrateslots"});
    } catch (const std::runtime_error& e) {
      problems += std::string("\n  ") + e.what();
      continue;
    }
    // [[name, arity, flags...]] for a command it has; [nil] for one it does not know.
    const bool known = r.is_array() && r.elements.size() == 1 && r.elements[0].is_array() &&
                       !r.elements[0].elements.empty();
    atomic_migration_missing_ =
        known ? std::string()
              : n.address() +
                    " has no atomic slot migration: COMMAND INFO cluster|migrateslots answers " +
                    to_string(r);
    return *atomic_migration_missing_;
  }
  throw std::runtime_error("no cluster node answered COMMAND INFO:" + problems);
}

atomic_migration redis_cluster::begin_atomic_migration(std::uint16_t slot, const cluster_node& from,
                                                       const cluster_node& to, cutover_hold hold) {
  atomic_migration m{slot, from, to, {}, hold};
  const auto s = std::to_string(slot);
  auto source = client(from);
  // MIGRATESLOTS answers only OK: the new job is the one the source did not list before.
  std::set<std::string> listed;
  for (auto& job : slot_migrations(source)) listed.insert(job["name"]);
  auto switch_hold = [&](const char* on) {
    if (hold == cutover_hold::none) return;
    expect_ok(client(hold_node(m)).command({"DEBUG", "SLOTMIGRATION", hold_switch(hold), on}),
              hold_node(m), std::string("DEBUG SLOTMIGRATION ") + hold_switch(hold));
  };
  switch_hold("1");
  try {
    expect_ok(source.command({"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", s, s, "NODE", node_id(to)}),
              from, "CLUSTER MIGRATESLOTS " + s);
    for (auto& job : slot_migrations(source)) {
      if (job["operation"] == "EXPORT" && !listed.contains(job["name"])) m.job = job["name"];
    }
    if (m.job.empty()) {
      throw std::runtime_error(from.address() + " does not list the " + describe_migration(m) +
                               " it accepted");
    }
    if (hold == cutover_hold::none) return m;
    std::string state;
    if (!wait_until(
            [&] {
              return (state = atomic_migration_state(m)) == held_state(hold) || finished(state);
            },
            atomic_timeout, 5ms) ||
        state != held_state(hold)) {
      throw std::runtime_error("the " + describe_migration(m) + " did not come to " +
                               held_state(hold) + " in " + std::to_string(atomic_timeout.count()) +
                               " s: it is " + (state.empty() ? "gone" : state));
    }
  } catch (...) {
    try {
      switch_hold("0");
    } catch (const std::runtime_error&) {  // the first error says more; restore() retries
    }
    throw;
  }
  return m;
}

std::string redis_cluster::atomic_migration_state(const atomic_migration& m) const {
  auto source = client(m.from, probe_timeout);
  for (auto& job : slot_migrations(source)) {
    if (job["name"] == m.job) return job["state"];
  }
  return {};
}

void redis_cluster::finish_atomic_migration(const atomic_migration& m) {
  if (m.hold != cutover_hold::none) {
    expect_ok(client(hold_node(m)).command({"DEBUG", "SLOTMIGRATION", hold_switch(m.hold), "0"}),
              hold_node(m), std::string("DEBUG SLOTMIGRATION ") + hold_switch(m.hold) + " 0");
  }
  // The source's job succeeds once it sees the target's claim to the slot.
  migration_fields job;
  auto done = [&] {
    auto source = client(m.from, probe_timeout);
    for (auto& j : slot_migrations(source)) {
      if (j["name"] == m.job) job = j;
    }
    return job.empty() || finished(job["state"]);
  };
  if (!wait_until(done, atomic_timeout, 5ms)) {
    throw std::runtime_error("the " + describe_migration(m) + " is still " + job["state"] +
                             " after " + std::to_string(atomic_timeout.count()) + " s");
  }
  if (job["state"] != "success") {
    throw std::runtime_error("the " + describe_migration(m) + " ended " +
                             (job.empty() ? "unlisted" : job["state"]) +
                             (job["message"].empty() ? "" : ": " + job["message"]));
  }
  agree_on_owner(m.slot, m.to);
}

void redis_cluster::migrate_slot_atomically(std::uint16_t slot, const cluster_node& from,
                                            const cluster_node& to) {
  finish_atomic_migration(begin_atomic_migration(slot, from, to));
}

std::string redis_cluster::atomic_migration_problem(raw_client& node) const {
  if (!has_atomic_migration()) return {};
  for (auto& job : slot_migrations(node)) {
    if (!finished(job["state"])) {
      return "has an atomic slot migration in progress: " + job["operation"] + " of slots " +
             job["slot_ranges"] + ", " + job["state"];
    }
  }
  return {};
}

void redis_cluster::cancel_atomic_migrations() {
  if (!has_atomic_migration()) return;
  auto in_progress = [](raw_client& c, const char* operation) {
    for (auto& job : slot_migrations(c)) {
      if (!finished(job["state"]) && (operation == nullptr || job["operation"] == operation)) {
        return true;
      }
    }
    return false;
  };
  // Only a source can cancel; its target's import then fails as the link closes, and drops
  // the keys it was hiding.
  for (const auto& n : nodes_) {
    try {
      auto c = client(n, probe_timeout);
      if (in_progress(c, "EXPORT")) {
        expect_ok(c.command({"CLUSTER", "CANCELSLOTMIGRATIONS"}), n,
                  "CLUSTER CANCELSLOTMIGRATIONS");
      }
    } catch (const std::runtime_error&) {  // down: its migrations ended with it
    }
  }
  std::string left;
  auto none_left = [&] {
    for (const auto& n : nodes_) {
      try {
        auto c = client(n, probe_timeout);
        if (in_progress(c, nullptr)) {
          left = n.address();
          return false;
        }
      } catch (const std::runtime_error&) {
      }
    }
    return true;
  };
  if (!wait_until(none_left, atomic_timeout, 10ms)) {
    throw std::runtime_error(left + " still lists an atomic slot migration in progress " +
                             std::to_string(atomic_timeout.count()) + " s after it was cancelled");
  }
  // Switched off only now: a target let go while its source's grant stood would take the slot.
  for (const auto& n : nodes_) {
    try {
      auto c = client(n, probe_timeout);
      for (const char* which : {"PREVENT-PAUSE", "PREVENT-FAILOVER"}) {
        c.command({"DEBUG", "SLOTMIGRATION", which, "0"});
      }
    } catch (const std::runtime_error&) {
    }
  }
}

}  // namespace relock::test
