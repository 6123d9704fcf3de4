// SPDX-License-Identifier: Apache-2.0
// The fault suite's TCP proxy against a real redis-server: each fault does what it says.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <stdexcept>

#include <relock/client.hpp>

#include "support/fault_proxy.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

raw_client through(const fault_proxy& proxy, std::chrono::milliseconds timeout = 2s) {
  return raw_client(proxy.host(), proxy.port(), {}, {}, timeout);
}

bool fails(raw_client& c, std::vector<std::string> args) {
  try {
    c.command(std::move(args));
    return false;
  } catch (const std::runtime_error&) {
    return true;
  }
}

}  // namespace

TEST(fault_proxy, passes_delays_and_counts) {
  redis_server server;
  fault_proxy proxy(server.host(), server.port());
  raw_client c = through(proxy);
  EXPECT_EQ(c.command({"PING"}).str, "PONG");
  EXPECT_EQ(proxy.accepted(), 1u);
  EXPECT_EQ(proxy.connections(), 1u);
  proxy.delay(200ms);
  auto t0 = steady::now();
  EXPECT_EQ(c.command({"PING"}).str, "PONG");
  const auto took = steady::now() - t0;
  EXPECT_GE(took, 400ms);  // held each way
  EXPECT_LT(took, 2s);
  proxy.pass();
  t0 = steady::now();
  c.command({"PING"});
  EXPECT_LT(steady::now() - t0, 200ms);
}

TEST(fault_proxy, dropped_replies_run_on_the_server_unanswered_and_the_connection_ends) {
  redis_server server;
  fault_proxy proxy(server.host(), server.port());
  raw_client c = through(proxy, 300ms);
  c.command({"PING"});
  raw_client direct = raw_client::to(server);
  proxy.drop_replies();
  EXPECT_TRUE(fails(c, {"SET", "k", "v"}));
  EXPECT_EQ(direct.command({"GET", "k"}).str, "v");
  proxy.pass();  // the connection lost a reply: it is reset, never misaligned
  EXPECT_TRUE(wait_until([&] { return proxy.connections() == 0; }, 2s));
}

TEST(fault_proxy, a_blackhole_holds_everything_until_it_lifts) {
  redis_server server;
  fault_proxy proxy(server.host(), server.port());
  raw_client c = through(proxy, 10s);
  c.command({"PING"});
  raw_client direct = raw_client::to(server);
  proxy.blackhole();
  auto set = std::async(std::launch::async, [&] { return c.command({"SET", "k", "v"}).str; });
  // Nothing arrives while it lasts, and the connection stays open.
  EXPECT_FALSE(wait_until([&] { return !direct.command({"GET", "k"}).is_nil(); }, 300ms));
  EXPECT_EQ(proxy.connections(), 1u);
  proxy.pass();  // the partition heals: what was held arrives, in order
  EXPECT_EQ(set.get(), "OK");
  EXPECT_EQ(direct.command({"GET", "k"}).str, "v");
}

TEST(fault_proxy, a_reset_breaks_the_connection_and_the_client_comes_back) {
  redis_server server;
  fault_proxy proxy(server.host(), server.port());
  raw_client c = through(proxy);
  c.command({"PING"});
  proxy.reset_all();
  EXPECT_TRUE(wait_until([&] { return proxy.connections() == 0; }, 2s));
  EXPECT_TRUE(fails(c, {"PING"}));
  EXPECT_EQ(c.command({"PING"}).str, "PONG");  // reconnects

  relock::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(proxy.port());
  relock::client client(cfg);
  auto lk = client.lock("through-the-proxy");
  lk.lock();
  lk.unlock();
  proxy.reset_all();
  EXPECT_TRUE(lk.try_lock(5s));  // a wait rides through the reset
  lk.unlock();
}

TEST(fault_proxy, goes_away_promptly_with_connections_in_a_blackhole) {
  redis_server server;
  const auto t0 = steady::now();
  {
    fault_proxy proxy(server.host(), server.port());
    raw_client c = through(proxy);
    c.command({"PING"});
    proxy.blackhole();
  }
  EXPECT_LT(steady::now() - t0, 1s);
}
