// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::server_node and relock::server_reply: the servers behind a client and one command's
/// reply, for tools and health checks (client::nodes, client::call). relock's own `doctor`,
/// `top` and `status` read the servers this way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace relock {

/// What a node is to the client.
enum class node_role {
  master,    ///< takes the lock writes: the one server, Sentinel's master now, a Cluster's master
  sentinel,  ///< a sentinel of the URL
};

/// One server behind a client.
struct server_node {
  std::string address;                 ///< host:port
  node_role role = node_role::master;  ///< what it is to the client
};

/// A server's reply to client::call, as Redis typed it (RESP2).
struct server_reply {
  /// The reply's type.
  enum class kind : std::uint8_t { nil, status, error, integer, string, array };
  kind type = kind::nil;                 ///< which of the members below holds it
  std::string text{};                    ///< status, error and string payloads
  std::int64_t integer = 0;              ///< integer payload
  std::vector<server_reply> elements{};  ///< array payload

  /// An error reply ("NOPERM ...", "ERR unknown command ...").
  bool is_error() const { return type == kind::error; }
};

}  // namespace relock
