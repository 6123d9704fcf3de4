// What every interop test starts from, once per Redisson version built by
// tests/interop/redisson/prepare: its own redis-server, relock settings pointed at it, and the
// Redisson driver on the same server.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <relock/config.hpp>

#include "redisson_driver.hpp"
#include "support/redis_server.hpp"

namespace relock::test {

class redisson_fixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }

  relock::config settings(std::chrono::milliseconds watchdog = std::chrono::seconds(30)) {
    relock::config c;
    c.url = server_.url();
    c.watchdog_lease = watchdog;
    return c;
  }
  // Redisson on the same server; `watchdog` is its lockWatchdogTimeout.
  redisson_driver java(std::chrono::milliseconds watchdog = std::chrono::seconds(30)) {
    return redisson_driver(GetParam(), server_.url(), watchdog);
  }

  redis_server server_;
};

}  // namespace relock::test
