// SPDX-License-Identifier: Apache-2.0
// One request to one server on a connection of its own, on a private I/O loop, before the
// client's own loop runs: how a client finds its servers (a cluster's map, Sentinel's master).
#pragma once

#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include "net/connection.hpp"
#include "resp/request.hpp"

namespace relock::exec {

struct probe_result {
  std::error_code ec;  // connect, handshake (auth_failed) or the request's own failure
  std::string detail;  // why, for humans
  std::vector<resp::reply> replies;
};

// Connects to `where` (with `options`' credentials and timeouts), sends `request`, waits for its
// replies up to `timeout`, closes. Blocks the calling thread.
probe_result probe(const net::endpoint& where, net::connection_options options,
                   resp::request request, std::chrono::milliseconds timeout);

}  // namespace relock::exec
