// SPDX-License-Identifier: Apache-2.0
// Picks a loopback TCP port that nothing listens on, for servers started by the fixtures; and
// holds one that nothing can listen on, for tests that want a connection refused.
#pragma once

#include <cstdint>

namespace relock::test {

// Asks the kernel for a free port on 127.0.0.1 by binding port 0, then releases it. Another
// process may take the port before the caller binds it, so callers must be ready to retry
// with a new one when their bind fails (redis_server does).
std::uint16_t free_loopback_port();

// A loopback port bound and never listened on while this lives: a connection to it is refused,
// and no server another test starts meanwhile can take it (a port merely found free, or left
// by a stopped server, can be handed to the next one that asks the kernel).
class closed_port {
 public:
  closed_port();
  ~closed_port();
  closed_port(const closed_port&) = delete;
  closed_port& operator=(const closed_port&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace relock::test
