// SPDX-License-Identifier: Apache-2.0
// sentinel_set: is the set healthy, waiting until it is, and repairing what a test left.
#include "support/sentinel_set.hpp"

#include "support/wait.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string_view>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Each check opens a dozen connections; every 50 ms keeps that light on a 2-core machine while
// the measured times stay precise enough.
constexpr auto health_poll = 50ms;
// Between its once-a-second acknowledgements (REPLCONF ACK) a streaming replica trails the
// master by what was written since: on an idle set, a few hundred bytes of sentinel hellos. One
// still catching up trails by more.
constexpr long long max_replica_lag_bytes = 16 * 1024;

std::string address_of(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// The value of `key` in "key:value\r\n" lines (INFO); empty when absent.
std::string info_value(std::string_view text, std::string_view key) {
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find("\r\n", at);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(at, end - at);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') {
      return std::string(line.substr(key.size() + 1));
    }
    at = end + 2;
  }
  return {};
}

// The value of `key` in "k1=v1,k2=v2" (INFO's slave0 line); empty when absent.
std::string list_field(std::string_view list, std::string_view key) {
  for (std::size_t at = 0; at < list.size();) {
    auto end = list.find(',', at);
    if (end == std::string_view::npos) end = list.size();
    auto item = list.substr(at, end - at);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=') {
      return std::string(item.substr(key.size() + 1));
    }
    at = end + 1;
  }
  return {};
}

// A field of a flat name/value array (SENTINEL MASTER, an entry of SENTINEL REPLICAS).
std::string field(const resp::reply& r, std::string_view name) {
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    if (r.elements[i].str == name) return r.elements[i + 1].str;
  }
  return {};
}

// Flags a client reading SENTINEL REPLICAS (relock among them) counts a replica out for.
bool flagged_down(std::string_view flags) {
  for (std::string_view down : {"s_down", "o_down", "disconnected"}) {
    for (std::size_t at = 0; at <= flags.size();) {
      auto end = flags.find(',', at);
      if (end == std::string_view::npos) end = flags.size();
      if (flags.substr(at, end - at) == down) return true;
      at = end + 1;
    }
  }
  return false;
}

// The master says so, with `replica` online and close behind it.
std::string master_problem(raw_client& master, std::uint16_t replica) {
  auto role = master.command({"ROLE"});
  if (!role.is_array() || role.elements.empty() || role.elements[0].str != "master") {
    return "says ROLE " + to_string(role);
  }
  const auto info = master.command({"INFO", "replication"}).str;
  if (info_value(info, "connected_slaves") != "1") {
    return "has " + info_value(info, "connected_slaves") + " replicas connected";
  }
  const auto slave = info_value(info, "slave0");
  if (list_field(slave, "port") != std::to_string(replica)) return "replicates to " + slave;
  if (list_field(slave, "state") != "online") return "has its replica " + slave;
  const auto lag =
      std::stoll(info_value(info, "master_repl_offset")) - std::stoll(list_field(slave, "offset"));
  if (lag > max_replica_lag_bytes) {
    return "has its replica " + std::to_string(lag) + " bytes behind (" + slave + ")";
  }
  return {};
}

// The replica's link to `master` is up and done syncing.
std::string replica_problem(raw_client& replica, std::uint16_t master) {
  const auto info = replica.command({"INFO", "replication"}).str;
  if (info_value(info, "role") != "slave") return "says role:" + info_value(info, "role");
  if (info_value(info, "master_port") != std::to_string(master)) {
    return "replicates 127.0.0.1:" + info_value(info, "master_port");
  }
  if (info_value(info, "master_link_status") != "up") {
    return "has master_link_status:" + info_value(info, "master_link_status");
  }
  if (info_value(info, "master_sync_in_progress") != "0") return "is still syncing";
  return {};
}

// Sets the sentinel's SENTINEL DEBUG `name` to `value` until `done()` (2 s at most), then back to
// what it was. False when the sentinel lists no such setting (SENTINEL DEBUG lists "NAME",
// value, ... from Redis 7.0 on).
template <class Done>
bool for_a_moment(raw_client& sentinel, const std::string& name, const std::string& value,
                  Done done) {
  const auto was = field(sentinel.command({"SENTINEL", "DEBUG"}), name);
  if (was.empty()) return false;
  sentinel.command({"SENTINEL", "DEBUG", name, value});
  wait_until(done, 2s, 10ms);
  sentinel.command({"SENTINEL", "DEBUG", name, was});
  return true;
}

// The role-reported of `replica` in a SENTINEL REPLICAS reply; empty when it is not listed.
std::string reported_role(const resp::reply& replicas, std::uint16_t replica) {
  for (const auto& r : replicas.elements) {
    if (field(r, "name") == address_of(replica)) return field(r, "role-reported");
  }
  return {};
}

// What one sentinel sees: no failover in progress, the other sentinels, and exactly one
// replica it would count, `replica`.
std::string view_problem(raw_client& sentinel, const std::string& name, int sentinels,
                         std::uint16_t replica) {
  const auto info = sentinel.command({"INFO", "sentinel"}).str;
  if (info_value(info, "sentinel_tilt") != "0") return "is in TILT mode";
  auto master = sentinel.command({"SENTINEL", "MASTER", name});
  if (field(master, "flags") != "master") return "flags the master " + field(master, "flags");
  if (field(master, "num-other-sentinels") != std::to_string(sentinels - 1)) {
    return "knows " + field(master, "num-other-sentinels") + " other sentinels";
  }
  auto replicas = sentinel.command({"SENTINEL", "REPLICAS", name});
  std::string counted;
  for (const auto& r : replicas.elements) {
    if (flagged_down(field(r, "flags"))) continue;
    if (!counted.empty()) counted += ", ";
    counted += field(r, "name");
  }
  if (counted != address_of(replica)) {
    return "counts the replicas [" + counted + "], not " + address_of(replica);
  }
  // The role it last heard the replica report. A node just demoted (restore()) reads "master"
  // here until the sentinel's next INFO of it, up to 10 s later; a sentinel in that state that
  // sees a failover promote the node before it has heard of the new master turns it straight
  // back into a replica (a replica reporting "master" for over 8 s, in its view), and the
  // failover's new master is gone (seen in sentinel_interop, session 28).
  if (const auto role = reported_role(replicas, replica); role != "slave") {
    return "still has " + address_of(replica) + " reporting role " + role;
  }
  return {};
}

}  // namespace

std::string sentinel_set::health_problem() const {
  for (const auto& d : data_) {
    if (!d->running()) return "the data node " + address_of(d->port()) + " is down";
    if (paused_data_.count(d->port()))
      return "the data node " + address_of(d->port()) + " is paused";
  }
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    auto& process = sentinels_[i]->process;
    const auto who = "sentinel " + std::to_string(i) + " (" + address_of(sentinels_[i]->port) + ")";
    if (!process.running()) return who + " " + process.describe_exit();
    if (process.paused()) return who + " is paused";
  }
  std::uint16_t master = 0;
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    try {
      const auto named = named_by(i);
      if (master != 0 && named != master) {
        return "sentinel " + std::to_string(i) + " names the master " + address_of(named) +
               ", sentinel 0 " + address_of(master);
      }
      master = named;
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  if (master != data_[0]->port() && master != data_[1]->port()) {
    return "the sentinels name " + address_of(master) + ", which is no data node";
  }
  const auto replica = other_than(master);
  std::string where;
  try {
    where = "the master " + address_of(master) + " ";
    auto m = probe(master);
    if (auto p = master_problem(m, replica); !p.empty()) return where + p;
    where = "the replica " + address_of(replica) + " ";
    auto r = probe(replica);
    if (auto p = replica_problem(r, master); !p.empty()) return where + p;
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      where = "sentinel " + std::to_string(i) + " ";
      auto s = probe_sentinel(i);
      auto p = view_problem(s, options_.master_name, options_.sentinels, replica);
      if (!p.empty()) return where + p;
    }
  } catch (const std::exception& e) {  // no answer, or a field that is not a number
    return where + "did not answer as expected: " + e.what();
  }
  return {};
}

void sentinel_set::wait_healthy(std::chrono::milliseconds timeout) const {
  std::string problem;
  auto healthy = [&] {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) refresh_role(i);
    return (problem = health_problem()).empty();
  };
  if (wait_until(healthy, timeout, health_poll)) return;
  throw_unhealthy("the Sentinel set is not healthy", timeout, problem);
}

void sentinel_set::restore(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  for (auto& s : sentinels_) s->process.resume();
  for (auto port : std::set<std::uint16_t>(paused_data_)) resume(port);
  restart_dead_nodes(left());
  std::string problem;
  auto repaired = [&] {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) end_tilt(i);
    demote_stale_master();
    for (std::size_t i = 0; i < sentinels_.size(); ++i) refresh_role(i);
    return (problem = health_problem()).empty();
  };
  if (wait_until(repaired, left(), health_poll)) return;
  throw_unhealthy("restore: the Sentinel set is not healthy", timeout, problem);
}

void sentinel_set::restart_dead_nodes(std::chrono::milliseconds timeout) {
  std::vector<std::uint16_t> dead;
  for (const auto& d : data_) {
    if (!d->running()) dead.push_back(d->port());
  }
  if (dead.empty()) return;
  if (dead.size() == 2) {
    // Nothing to fail over to: the master the sentinels name comes back as that master (empty),
    // then the other as its replica.
    const auto master = master_port();
    restart(master);
    restart(other_than(master));
    return;
  }
  // A killed master that the sentinels still name is replaced first, as it would be in
  // production: brought back at once it would be an empty master the replica copies, while
  // the sentinels may already be promoting that replica.
  if (master_port() == dead[0]) wait_for_new_master(dead[0], timeout);
  restart(dead[0]);
}

bool sentinel_set::demote_stale_master() {
  // After a switchover the old master says ROLE master (with no replica) until a sentinel
  // converts it, some 10 s later (see the header). Every sentinel already names the other node,
  // so this only does sooner what they are about to do.
  const auto master = agreed_master();
  if (!master || role_of(*master) != "master") return false;
  const auto stale = other_than(*master);
  if (paused_data_.count(stale) || role_of(stale) != "master") return false;
  try {
    probe(stale).command({"REPLICAOF", "127.0.0.1", std::to_string(*master)});
    return true;
  } catch (const std::runtime_error&) {
    return false;  // it went away: the health check will say so
  }
}

bool sentinel_set::in_tilt(std::size_t i) const {
  try {
    return info_value(probe_sentinel(i).command({"INFO", "sentinel"}).str, "sentinel_tilt") == "1";
  } catch (const std::runtime_error&) {
    return false;  // not answering is another problem
  }
}

bool sentinel_set::end_tilt(std::size_t i) {
  if (!listening(i) || !in_tilt(i)) return false;
  try {
    auto s = probe_sentinel(i);
    return for_a_moment(s, "TILT-PERIOD", "1", [&] { return !in_tilt(i); });  // 0 is refused
  } catch (const std::runtime_error&) {
    return false;  // the health check will say what is wrong
  }
}

bool sentinel_set::refresh_role(std::size_t i) const {
  if (!listening(i)) return false;
  try {
    const auto master = agreed_master();
    if (!master) return false;
    const auto replica = other_than(*master);
    auto s = probe_sentinel(i);
    auto role = [&] {
      return reported_role(s.command({"SENTINEL", "REPLICAS", options_.master_name}), replica);
    };
    if (const auto r = role(); r.empty() || r == "slave") return false;
    return for_a_moment(s, "INFO-PERIOD", "100", [&] { return role() == "slave"; });
  } catch (const std::runtime_error&) {
    return false;  // the health check will say what is wrong
  }
}

void sentinel_set::throw_unhealthy(const std::string& what, std::chrono::milliseconds timeout,
                                   const std::string& problem) const {
  throw std::runtime_error(what + " after " + std::to_string(timeout.count()) + " ms: " + problem +
                           "\n" + log_tails(15));
}

}  // namespace relock::test
