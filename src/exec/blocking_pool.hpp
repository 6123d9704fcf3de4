// SPDX-License-Identifier: Apache-2.0
// Connections of their own for blocking commands (BLPOP). A command that waits on the server
// would stall every pipelined request behind it on a shared command connection, so each
// blocking call in flight gets a connection to itself: made on demand to the node the call goes
// to, kept for reuse while idle (a few per node), closed with the client. The connections
// reconnect by themselves, as command connections do. I/O thread only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "net/connection.hpp"

namespace relock::exec {

class blocking_pool {
 public:
  // `options` as the command connections have them (credentials, timeouts, client name); the
  // target is each lease's own.
  blocking_pool(asio::io_context& io, net::connection_options options, std::size_t keep_idle = 4);

  // A connection to `to` for one blocking call; nullptr once the pool is closed.
  std::shared_ptr<net::connection> lease(const net::endpoint& to);
  // Back from a call with nothing outstanding on it: kept for the next lease, or closed.
  void give_back(std::shared_ptr<net::connection> c);
  // Closes every connection, idle or leased: what is outstanding fails with errc::cancelled.
  void close();

 private:
  asio::io_context& io_;
  net::connection_options options_;
  std::size_t keep_idle_;
  std::map<std::string, std::vector<std::shared_ptr<net::connection>>> idle_;  // by address
  std::vector<std::weak_ptr<net::connection>> made_;
  bool closed_ = false;
};

}  // namespace relock::exec
