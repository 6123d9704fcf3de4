// SPDX-License-Identifier: Apache-2.0
// What every interop test starts from, once per Redisson version built by
// tests/interop/redisson/prepare: its own redis-server, relock settings pointed at it, the
// Redisson driver on the same server, and a raw client there that reads (or writes) the locks'
// data as Redis holds it. The helpers the tests share beyond these are in interop_env.hpp.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <relock/config.hpp>

#include "interop_env.hpp"
#include "redisson_driver.hpp"
#include "support/command_stats.hpp"
#include "support/raw_client.hpp"
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

  fields hash_of(const std::string& key) {
    fields out;
    auto r = raw_.command({"HGETALL", key});
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      out[r.elements[i].str] = r.elements[i + 1].str;
    }
    return out;
  }
  bool exists(const std::string& key) { return raw_.command({"EXISTS", key}).integer == 1; }
  std::int64_t pttl(const std::string& key) { return raw_.command({"PTTL", key}).integer; }
  // Connections subscribed to `channel` (PUBSUB NUMSUB): a waiter of either language listening.
  std::int64_t subscribers(const std::string& channel) {
    return raw_.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
  }

  // How often the server has run `command`, and the lock scripts it has run and answered so
  // far, by anyone (EVAL: 3.18.1; EVALSHA: relock, 4.x): support/command_stats.hpp.
  std::int64_t calls_of(const std::string& command) { return test::calls_of(raw_, command); }
  std::int64_t script_calls() { return scripts_answered(raw_); }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace relock::test
