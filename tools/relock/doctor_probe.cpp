// SPDX-License-Identifier: Apache-2.0
// relock doctor's reading of the nodes: each figure by one command through client::call (on a
// master, the client's own connection, so the round trips are the locks' own), each failure
// kept as words for the finding. Nothing here throws out: a node that stops answering costs its
// figures, not the report.
#include <algorithm>
#include <charconv>
#include <sstream>

#include "doctor.hpp"

namespace relock_cli::doctor {
namespace {

using relock::server_reply;
using std::chrono::microseconds;

constexpr int pings = 5;

// A command's reply, or the words of its error: the server's error reply as it is, a call that
// got none as "no answer: ...".
struct answer {
  server_reply reply;
  std::string trouble;
};

answer ask(const relock::client& client, const relock::server_node& node,
           std::vector<std::string> command) {
  answer a;
  try {
    a.reply = client.call(node, std::move(command));
    if (a.reply.is_error()) a.trouble = a.reply.text;
  } catch (const std::exception& e) {
    a.trouble = std::string("no answer: ") + e.what();
  }
  return a;
}

// A flat array of names and values (CONFIG GET, SENTINEL MASTER) as a map.
std::map<std::string, std::string> pairs_of(const server_reply& r) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out[r.elements[i].text] = r.elements[i + 1].text;
  }
  return out;
}

round_trip_read read_round_trip(const relock::client& client, const relock::server_node& node) {
  round_trip_read r;
  for (int i = 0; i < pings; ++i) {
    const auto start = std::chrono::steady_clock::now();
    // An error reply (a user without +ping) still came back: it counts as a round trip.
    const auto a = ask(client, node, {"PING"});
    if (a.trouble.rfind("no answer", 0) == 0) {
      r.trouble = a.trouble.substr(11);
      return r;
    }
    r.samples.push_back(
        std::chrono::duration_cast<microseconds>(std::chrono::steady_clock::now() - start));
  }
  return r;
}

// Every setting at once: one round trip, on any Redis version.
config_read read_config(const relock::client& client, const relock::server_node& node,
                        const std::string& user) {
  config_read c;
  c.user = user;
  const auto a = ask(client, node, {"CONFIG", "GET", "*"});
  if (!a.trouble.empty()) {
    c.refused = a.trouble;
  } else {
    c.values = pairs_of(a.reply);
  }
  return c;
}

replication_read read_replication(const relock::client& client, const relock::server_node& node) {
  replication_read r;
  const auto a = ask(client, node, {"INFO", "replication"});
  if (!a.trouble.empty()) {
    r.trouble = a.trouble;
    return r;
  }
  std::istringstream lines(a.reply.text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("connected_slaves:", 0) != 0) continue;
    std::int64_t n = 0;
    const auto* from = line.data() + 17;
    if (std::from_chars(from, line.data() + line.size(), n).ec == std::errc()) r.replicas = n;
  }
  if (!r.replicas) r.trouble = "no connected_slaves line";
  return r;
}

lua_read read_lua(const relock::client& client, const relock::server_node& node,
                  const std::string& user) {
  lua_read l;
  l.user = user;
  const auto eval = ask(client, node, {"EVAL", "return 1", "0"});
  l.eval_error = eval.trouble;
  if (eval.trouble.empty() && eval.reply.integer != 1) l.eval_error = "answered no 1";
  if (eval.trouble.rfind("NOPERM", 0) != 0) return l;
  // relock itself loads its scripts once and runs them by SHA: a user may have just that.
  const auto load = ask(client, node, {"SCRIPT", "LOAD", "return 1"});
  if (!load.trouble.empty()) {
    l.evalsha_error = "SCRIPT LOAD: " + load.trouble;
    return l;
  }
  const auto run = ask(client, node, {"EVALSHA", load.reply.text, "0"});
  l.evalsha_error = run.trouble;
  return l;
}

clock_read read_clock(const relock::client& client, const relock::server_node& node) {
  clock_read c;
  using clock = std::chrono::system_clock;
  const auto before = clock::now();
  const auto a = ask(client, node, {"TIME"});
  const auto after = clock::now();
  if (!a.trouble.empty()) {
    c.trouble = a.trouble;
    return c;
  }
  std::int64_t s = 0, us = 0;
  const auto& e = a.reply.elements;
  if (e.size() != 2 ||
      std::from_chars(e[0].text.data(), e[0].text.data() + e[0].text.size(), s).ec != std::errc() ||
      std::from_chars(e[1].text.data(), e[1].text.data() + e[1].text.size(), us).ec !=
          std::errc()) {
    c.trouble = "an unexpected reply";
    return c;
  }
  // The server read its clock somewhere inside the call: its middle is the best guess.
  const auto middle = before + (after - before) / 2;
  const auto node_time = microseconds(s * 1'000'000 + us);
  const auto here = std::chrono::duration_cast<microseconds>(middle.time_since_epoch());
  c.skew = node_time - here;
  return c;
}

sentinel_read read_sentinel(const relock::client& client, const relock::server_node& node,
                            const std::string& master) {
  sentinel_read s;
  s.master_name = master;
  const auto a = ask(client, node, {"SENTINEL", "MASTER", master});
  if (!a.trouble.empty()) {
    s.trouble = a.trouble;
  } else {
    s.fields = pairs_of(a.reply);
  }
  return s;
}

}  // namespace

std::vector<finding> examine_master(const relock::client& client, const relock::client& holder,
                                    const refusal_watch& watch, const relock::server_node& node,
                                    const scratch_names& scratch, const run_context& run) {
  std::vector<finding> out;
  const auto add = [&](finding f) {
    f.node = node.address;
    out.push_back(std::move(f));
  };
  const auto trip = read_round_trip(client, node);
  if (!trip.trouble.empty()) {
    add(round_trip(trip, run.lease));  // a failure; nothing else can be read
    return out;
  }
  const auto config = read_config(client, node, run.user);
  add(maxmemory_policy(config));
  add(persistence(config));
  add(replicas(read_replication(client, node), config));
  if (run.cluster) add(cluster_node_timeout(config, run.lease));
  if (scratch.tag.empty()) {
    rights_read none;
    none.trouble = "no slot of this master found in CLUSTER SLOTS to try relock's calls on";
    add(acl_rights(none));
  } else {
    add(acl_rights(try_rights(client, holder, watch, node, scratch, run.user)));
  }
  add(lua(read_lua(client, node, run.user)));
  add(busy_reply_threshold(config, run.lease));
  add(pubsub_buffer(config));
  add(clock_skew(read_clock(client, node)));
  add(round_trip(trip, run.lease));
  return out;
}

std::vector<finding> examine_sentinel(const relock::client& client, const relock::server_node& node,
                                      const run_context& run) {
  auto f = sentinel_timeouts(read_sentinel(client, node, run.sentinel_master), run.lease);
  f.node = node.address;
  return {f};
}

}  // namespace relock_cli::doctor
