// SPDX-License-Identifier: Apache-2.0
// The master that Sentinel names, found before the client starts: each sentinel is asked in
// turn (SENTINEL GET-MASTER-ADDR-BY-NAME, and SENTINEL REPLICAS for how many replicas could take
// over), and the master it names must confirm with ROLE that it is one, since a sentinel may
// not know of a failover yet.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "net/connection.hpp"
#include "net/endpoint.hpp"
#include "topology/slot_map.hpp"

namespace relock::exec {

struct sentinel_master {
  topology::node master;
  int replicas = 0;  // Sentinel's replicas of it that are neither down nor disconnected
};

// `sentinels` carry the sentinels' credentials, `data` the data nodes' (its target is ignored).
// Throws relock::error naming what was wrong: errc::connection when no sentinel answers or no
// named master confirms (with each one's reason), errc::invalid_argument when every sentinel
// that answered knows no master by that name, errc::auth_failed when a sentinel or the master
// refuses the credentials it was given.
sentinel_master discover_master(const std::vector<net::endpoint>& sentinels,
                                const std::string& master_name,
                                const net::connection_options& sentinel_options,
                                const net::connection_options& data,
                                std::chrono::milliseconds command_timeout);

// The role a server's ROLE reply names ("master", "slave", "sentinel"), empty when unreadable.
std::string role_of(const resp::reply& role_reply);

}  // namespace relock::exec
