// SPDX-License-Identifier: Apache-2.0
// The Redisson driver itself, against a real redis-server, once per built Redisson version: it
// starts, reports who it is, and what its locks leave in Redis is what the contract says
// (hash field "<client_id>:<thread id>" = hold count, PTTL = watchdog timeout). Every other
// interop test trusts this.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "redisson_driver.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::resp::reply;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::redisson_driver;

namespace {

constexpr auto watchdog = 10s;

class driver_smoke : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }
};

std::int64_t pttl(raw_client& raw, const std::string& key) {
  reply r = raw.command({"PTTL", key});
  EXPECT_TRUE(r.is_integer()) << relock::resp::to_string(r);
  return r.integer;
}

// Someone subscribed to `channel` within 5 s (PUBSUB NUMSUB): a Java waiter listening.
bool waiting_on(raw_client& raw, const std::string& channel) {
  return relock::test::wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= 1;
      },
      5s);
}

}  // namespace

TEST_P(driver_smoke, starts_and_reports_its_redisson_version) {
  redis_server server;
  redisson_driver java(GetParam(), server.url(), watchdog);
  EXPECT_EQ(java.redisson_version(), redisson_driver::version_of_jar(GetParam()));
  EXPECT_EQ(java.client_id().size(), 36u) << java.client_id();
  EXPECT_GT(java.pid(), 0);
  EXPECT_EQ(java.call_ok("a", "ping"), "pong");
  // Unknown commands and bad arguments are answered, not fatal.
  auto bad = java.call("a", "no-such-command x");
  EXPECT_FALSE(bad.value("ok", true));
  EXPECT_NE(bad.value("error", "").find("unknown command"), std::string::npos) << bad.dump();
  auto bad_args = java.call("a", "trylock smoke not-a-number");
  EXPECT_FALSE(bad_args.value("ok", true)) << bad_args.dump();
  EXPECT_EQ(java.call_ok("a", "ping"), "pong");
  EXPECT_TRUE(java.stray_output().empty());
}

TEST_P(driver_smoke, lock_data_matches_the_contract) {
  redis_server server;
  auto raw = raw_client::to(server);
  redisson_driver java(GetParam(), server.url(), watchdog);

  auto r = java.call("a", "lock smoke");
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(r["result"], true);
  EXPECT_LE(r["start_ns"].get<std::int64_t>(), r["end_ns"].get<std::int64_t>());

  const std::string field = java.owner_field("a");
  EXPECT_EQ(field.rfind(java.client_id() + ":", 0), 0u) << field;

  // Exactly one field, <client_id>:<thread id> = "1"; TTL = the watchdog timeout.
  EXPECT_EQ(raw.command({"TYPE", "smoke"}), reply::make_status("hash"));
  EXPECT_EQ(raw.command({"HGETALL", "smoke"}),
            reply::make_array({reply::make_string(field), reply::make_string("1")}));
  auto ttl = pttl(raw, "smoke");
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, std::chrono::milliseconds(watchdog).count());

  // Re-entry by the same owner: count 2.
  EXPECT_EQ(java.call_ok("a", "lock smoke"), true);
  EXPECT_EQ(raw.command({"HGETALL", "smoke"}),
            reply::make_array({reply::make_string(field), reply::make_string("2")}));
  EXPECT_EQ(java.call_ok("a", "holdcount smoke"), 2);
  EXPECT_EQ(java.call_ok("a", "isheld smoke"), true);

  // Another owner (another Java thread) cannot take it, and is not its holder.
  EXPECT_EQ(java.call_ok("b", "trylock smoke 0"), false);
  EXPECT_EQ(java.call_ok("b", "isheld smoke"), false);
  EXPECT_EQ(java.call_ok("b", "islocked smoke"), true);
  EXPECT_NE(java.owner_field("b"), field);
  auto foreign = java.call("b", "unlock smoke");
  EXPECT_FALSE(foreign.value("ok", true));
  EXPECT_NE(foreign.value("error", "").find("IllegalMonitorStateException"), std::string::npos)
      << foreign.dump();

  // Two unlocks: the key is gone.
  EXPECT_EQ(java.call_ok("a", "unlock smoke"), true);
  EXPECT_EQ(raw.command({"HGET", "smoke", field}), reply::make_string("1"));
  EXPECT_EQ(java.call_ok("a", "unlock smoke"), true);
  EXPECT_EQ(raw.command({"EXISTS", "smoke"}), reply::make_integer(0));

  // Free again: b takes it.
  EXPECT_EQ(java.call_ok("b", "trylock smoke 0"), true);
  const std::string field_b = java.owner_field("b");
  EXPECT_EQ(raw.command({"HGETALL", "smoke"}),
            reply::make_array({reply::make_string(field_b), reply::make_string("1")}));
  EXPECT_EQ(java.call_ok("b", "unlock smoke"), true);
  EXPECT_TRUE(java.stray_output().empty());
}

TEST_P(driver_smoke, a_killed_driver_leaves_its_lock_to_expire) {
  redis_server server;
  auto raw = raw_client::to(server);
  redisson_driver java(GetParam(), server.url(), 2s);
  EXPECT_EQ(java.call_ok("a", "lock orphan"), true);
  EXPECT_EQ(raw.command({"EXISTS", "orphan"}), reply::make_integer(1));
  java.kill();
  EXPECT_TRUE(java.wait_exit(5s));
  EXPECT_THROW(java.call("a", "ping", 1s), std::runtime_error);
  // No watchdog any more: the key expires within the 2 s lease.
  auto ttl = pttl(raw, "orphan");
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 2000);
}

// The synchronizer commands (Synchronizers.java): each answers, on the data Redisson writes; a
// deferred (async) command answers when Redisson completes it while its owner goes on; 4.x-only
// methods answer UnsupportedException on 3.18.1.
TEST_P(driver_smoke, synchronizer_commands_answer) {
  redis_server server;
  auto raw = raw_client::to(server);
  redisson_driver java(GetParam(), server.url(), watchdog);
  const bool v3 = java.redisson_version().rfind("3.", 0) == 0;

  EXPECT_EQ(java.call_ok("a", "strysetpermits sem 2"), true);
  EXPECT_EQ(raw.command({"GET", "sem"}), reply::make_string("2"));
  EXPECT_EQ(java.call_ok("a", "sacquire sem 2"), true);
  EXPECT_EQ(java.call_ok("a", "stryacquire sem 1"), false);
  auto pending = java.send("b", "sacquireasync sem 1 20000");
  EXPECT_EQ(java.call_ok("b", "savailable sem"), 0);  // b is free while its acquire waits
  // Released only once the async acquire has settled down to wait: 3.18.1's async waiters can
  // miss a release that comes while they are still subscribing (see the README).
  ASSERT_TRUE(waiting_on(raw, "redisson_sc:{sem}"));
  EXPECT_THROW(java.wait_reply(pending, 200ms), std::runtime_error);
  EXPECT_EQ(java.call_ok("a", "srelease sem 1"), true);
  EXPECT_EQ(java.wait_reply(pending, 10s)["result"], true);
  EXPECT_EQ(java.call_ok("a", "saddpermits sem 3"), true);
  EXPECT_EQ(java.call_ok("a", "sdrain sem"), 3);

  EXPECT_EQ(java.call_ok("a", "ptrysetpermits pes 2"), true);
  auto id = java.call_ok("a", "pacquire pes 60000").get<std::string>();
  EXPECT_EQ(id.size(), 32u) << id;
  EXPECT_EQ(raw.command({"ZCARD", "{pes}:timeout"}), reply::make_integer(1));
  EXPECT_EQ(java.call_ok("a", "pupdatelease pes " + id + " 30000"), true);
  EXPECT_EQ(java.call_ok("a", "pavailable pes"), 1);
  auto acquired = java.call("a", "pacquired pes");
  auto lease = java.call("a", "pleasetime pes " + id);
  if (v3) {
    EXPECT_NE(acquired.value("error", "").find("UnsupportedException"), std::string::npos)
        << acquired.dump();
    EXPECT_NE(lease.value("error", "").find("UnsupportedException"), std::string::npos)
        << lease.dump();
  } else {
    EXPECT_EQ(acquired["result"], 1) << acquired.dump();
    EXPECT_GT(lease["result"].get<std::int64_t>(), 20000) << lease.dump();
  }
  EXPECT_EQ(java.call_ok("a", "ptryrelease pes " + id), true);
  auto again = java.call("a", "prelease pes " + id);
  EXPECT_NE(again.value("error", "").find("has already been released"), std::string::npos)
      << again.dump();
  EXPECT_EQ(java.call("a", "ptryacquire pes not-a-number").value("ok", true), false);
  EXPECT_EQ(java.call_ok("a", "pacquireasync pes").get<std::string>().size(), 32u);

  EXPECT_EQ(java.call_ok("a", "ltrysetcount cdl 1"), true);
  EXPECT_EQ(java.call_ok("a", "lcount cdl"), 1);
  EXPECT_EQ(java.call_ok("a", "lawait cdl 0"), false);
  auto opened = java.send("b", "lawaitasync cdl");
  ASSERT_TRUE(waiting_on(raw, "redisson_countdownlatch__channel__{cdl}"));
  EXPECT_THROW(java.wait_reply(opened, 200ms), std::runtime_error);
  EXPECT_EQ(java.call_ok("a", "lcountdown cdl"), true);
  EXPECT_EQ(java.wait_reply(opened, 10s)["result"], true);
  EXPECT_EQ(raw.command({"EXISTS", "cdl"}), reply::make_integer(0));
  EXPECT_EQ(java.call_ok("a", "lawait cdl"), true);
  EXPECT_EQ(java.call_ok("a", "ldelete cdl"), false);
  EXPECT_TRUE(java.stray_output().empty());
}

INSTANTIATE_TEST_SUITE_P(redisson, driver_smoke, ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return redisson_driver::param_name(info.param);
                         });
