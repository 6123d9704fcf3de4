// SPDX-License-Identifier: Apache-2.0
// Which node a key's commands go to, for every deployment: one server (a master with or without
// replicas, or the master Sentinel names now), or a Redis Cluster's master for the key's slot.
// No I/O: the executor asks, performs, and tells it what the servers said (a MOVED, a refreshed
// map, a new master named by Sentinel).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "topology/slot_map.hpp"

namespace relock::topology {

class router {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  // One server.
  explicit router(node server) : single_(std::move(server)) {}
  // A cluster, from its first map, reached at the ports of `ports` (TLS: the nodes' TLS ports).
  explicit router(slot_map map, port_kind ports = port_kind::plain)
      : map_(std::move(map)), ports_(ports), complete_(map_.covers_all()) {}

  bool cluster() const { return !single_.has_value(); }

  // One server: every key goes to `to` from now on (Sentinel named a new master).
  void master_moved(node to) { single_ = std::move(to); }

  // The node for `key`; nullopt when the cluster map has no master for its slot (a failover
  // under way): then any node will do, and its answer (MOVED, CLUSTERDOWN) decides.
  std::optional<node> node_for(std::string_view key) const;

  // A MOVED: the slot lives at `to` from now on, and the map is due for a refresh.
  void moved(std::uint16_t slot, node to);
  // A refreshed map replaces the old one, at this client's ports (slot_map::for_ports: a map
  // from CLUSTER SHARDS knows both). A map without them is dropped and the old one kept until
  // the next refresh.
  void refreshed(slot_map map, time_point now);
  // A connection failed, or a redirect came: the map may be stale.
  void suspect() { stale_ = true; }
  // Whether to refresh now: when suspected (at most every `min_gap`), or every `period` anyway.
  bool refresh_due(time_point now) const;
  void refreshing(time_point now) { last_refresh_ = now; }

  const slot_map& map() const { return map_; }

  static constexpr std::chrono::milliseconds min_gap{100};
  static constexpr std::chrono::seconds period{10};

 private:
  std::optional<node> single_;
  slot_map map_;
  port_kind ports_ = port_kind::plain;
  // map_.covers_all(), kept as the map changes: refresh_due runs on every send and reply, and
  // the scan of 16,384 slots took a third of a cluster client's CPU (bench/RESULTS.md, session 29).
  bool complete_ = false;
  bool stale_ = false;
  time_point last_refresh_{};
};

}  // namespace relock::topology
