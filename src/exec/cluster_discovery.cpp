// SPDX-License-Identifier: Apache-2.0
#include "exec/cluster_discovery.hpp"

#include <optional>
#include <string>

#include <relock/errors.hpp>

#include "exec/executor.hpp"
#include "exec/probe.hpp"

namespace relock::exec {
namespace {

struct answer {
  std::error_code ec;
  std::string detail;
  std::optional<topology::slot_map> map;
  bool sharded = false;
  bool not_cluster = false;
};

// One seed: ask for the map (SHARDS first).
answer ask(const net::endpoint& seed, net::connection_options options,
           std::chrono::milliseconds command_timeout) {
  // CLUSTER SHARDS names both ports of a TLS cluster; the map is kept at those we speak to.
  const auto ports = options.tls.context ? topology::port_kind::tls : topology::port_kind::plain;
  resp::request asked;
  asked.push({"CLUSTER", "SHARDS"});
  asked.push({"CLUSTER", "SLOTS"});
  asked.push({"PUBSUB", "SHARDNUMSUB"});
  auto [ec, detail, replies] = probe(seed, std::move(options), std::move(asked), command_timeout);
  answer a;
  const char* names[] = {"CLUSTER SHARDS", "CLUSTER SLOTS", "PUBSUB SHARDNUMSUB"};
  if (ec || replies.size() != 3) {
    a.ec = ec ? ec : make_error_code(errc::connection);
    a.detail = ec ? detail : "no reply";
    return a;
  }
  // Each is needed later too (SHARDS after a failover, SHARDNUMSUB for pubsub=auto): a user
  // whose ACL rules leave one out is told now, not when a failover is missed.
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error() && classify(replies[i]) == errc::no_permission) {
      a.ec = errc::no_permission;
      a.detail += (a.detail.empty() ? "" : "; ") + std::string(names[i]) + ": " + replies[i].str;
    }
  }
  if (a.ec) return a;
  if (replies[1].is_error()) {
    // "ERR This instance has cluster support disabled"
    a.not_cluster = replies[1].str.find("cluster support disabled") != std::string::npos;
    a.ec = a.not_cluster ? make_error_code(errc::invalid_argument)
                         : make_error_code(errc::server_error);
    a.detail = replies[1].str;
  } else {
    std::string why;
    a.sharded = !replies[2].is_error();
    a.map = topology::slot_map::from_shards(replies[0], seed.host, &why);
    if (a.map) a.map = a.map->for_ports(ports, &why);
    // Over TLS, CLUSTER SLOTS only where SHARDS is unknown (Redis 6): a Redis 7 whose SHARDS
    // names no TLS port runs without tls-cluster, and its SLOTS would name plain-text ports.
    if (!a.map && (ports == topology::port_kind::plain || replies[0].is_error())) {
      a.map = topology::slot_map::from_slots(replies[1], seed.host, &why, ports);
    }
    if (!a.map) {
      a.ec = errc::server_error;
      a.detail = "an unreadable slot map: " + why;
    }
  }
  return a;
}

}  // namespace

cluster_view discover_cluster(const std::vector<net::endpoint>& seeds,
                              net::connection_options options,
                              std::chrono::milliseconds command_timeout) {
  std::string reasons;
  std::error_code last = errc::connection;
  for (const auto& seed : seeds) {
    answer a = ask(seed, options, command_timeout);
    if (a.map) return {std::move(*a.map), a.sharded};
    if (a.not_cluster) {
      throw error(errc::invalid_argument, seed.address() + " is not in cluster mode (" + a.detail +
                                              "): use a redis:// URL for one server");
    }
    if (a.ec == errc::auth_failed || a.ec == errc::no_permission) {
      throw error(a.ec, seed.address() + ": " + a.detail);
    }
    last = a.ec == errc::server_error ? a.ec : make_error_code(errc::connection);
    reasons += (reasons.empty() ? "" : "; ") + seed.address() + ": " + a.detail;
  }
  throw error(last, "no cluster node answered: " + reasons);
}

}  // namespace relock::exec
