// SPDX-License-Identifier: Apache-2.0
// The first slot map of a Redis Cluster, asked of its seed nodes in turn before the client
// starts (CLUSTER SHARDS, or CLUSTER SLOTS from servers older than Redis 7), on a private
// connection and I/O loop of its own.
#pragma once

#include <chrono>
#include <vector>

#include "net/connection.hpp"
#include "net/endpoint.hpp"
#include "topology/slot_map.hpp"

namespace relock::exec {

struct cluster_view {
  topology::slot_map map;
  bool sharded_pubsub = false;  // PUBSUB SHARDNUMSUB answers (Redis 7)
};

// With TLS (options.tls), the map is at the nodes' TLS ports and by the names they announce
// (slot_map::from_shards), so every connection verifies the certificate by that name.
// Throws relock::error: errc::connection when no seed answers (with each seed's reason),
// errc::invalid_argument when a seed is not in cluster mode, auth_failed as the seed says.
cluster_view discover_cluster(const std::vector<net::endpoint>& seeds,
                              net::connection_options options,
                              std::chrono::milliseconds command_timeout);

}  // namespace relock::exec
