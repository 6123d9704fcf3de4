// SPDX-License-Identifier: Apache-2.0
#include "support/busy_script.hpp"

#include <chrono>
#include <exception>
#include <utility>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;

namespace relock::test {

busy_script::busy_script(const redis_server& server)
    : server_(server), runner_([host = server.host(), port = server.port()] {
        try {
          raw_client c(host, port, {}, {}, 30s);
          c.command({"EVAL", "local x = 0 for i = 1, 2000000000 do x = x + i end return x", "0"});
        } catch (const std::exception&) {
          // Killed: the caller only wanted the server busy meanwhile.
        }
      }) {}

busy_script::~busy_script() {
  kill();
  runner_.join();
}

bool busy_script::wait_until_busy() {
  raw_client probe = raw_client::to(server_);
  return wait_until([&] { return probe.command({"PING"}).error_code() == "BUSY"; }, 5s);
}

void busy_script::kill() {
  if (std::exchange(killed_, true)) return;
  raw_client killer = raw_client::to(server_);
  wait_until(
      [&] {
        auto r = killer.command({"SCRIPT", "KILL"});
        return !r.is_error() || r.error_code() == "NOTBUSY";
      },
      10s, 20ms);
}

}  // namespace relock::test
