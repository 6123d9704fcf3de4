// SPDX-License-Identifier: Apache-2.0
// Connections the server closed: counted lost, then restored once relock reconnects.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include <relock/client.hpp>

#include "metrics_env.hpp"

using namespace std::chrono_literals;
using relock::test::sample;
using relock::test::sum_of;

namespace {

class prometheus_connections : public relock::test::metrics_env {};

}  // namespace

TEST_F(prometheus_connections, a_killed_connection_is_counted_lost_and_then_restored) {
  auto s = settings();
  s.watchdog_lease = 600ms;  // a renewal every 200 ms: traffic on the command connection
  relock::client client(s);
  auto m = client.lock("held");
  m.lock();
  std::vector<sample> samples = scraped();
  EXPECT_EQ(sum_of(samples, "relock_connection_losses_total"), 0);
  EXPECT_EQ(sum_of(samples, "relock_reconnects_total"), 0);

  // Every normal client but the raw one (SKIPME is the default): relock's command connections.
  raw_.command({"CLIENT", "KILL", "TYPE", "normal"});
  EXPECT_TRUE(scrape_until(
      samples, [](const auto& s) { return sum_of(s, "relock_reconnects_total") >= 1; }, 10s));
  EXPECT_GE(sum_of(samples, "relock_connection_losses_total"), 1);
  // The hold outlived the reconnect: renewals go on.
  EXPECT_EQ(sum_of(samples, "relock_losses_total"), 0);
  m.unlock();
}
