// SPDX-License-Identifier: Apache-2.0
// The shared Sentinel fixture itself: every Sentinel test trusts it to be up with a master, a
// replica and 3 sentinels that agree, to fail over on request and on a crash, and to come back
// healthy from whatever a test left. It prints what Sentinel's steps take, since the Sentinel
// tests' own timeouts are sized by them.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <set>
#include <string>

#include "support/raw_client.hpp"
#include "support/sentinel_set.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::resp::reply;
using relock::test::raw_client;
using relock::test::sentinel_set;
using relock::test::shared_sentinel_set;
using relock::test::wait_until;

namespace {

using steady = std::chrono::steady_clock;

long long ms(steady::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// What the node says it is (ROLE), on a new connection each time: a sentinel reconfiguring a
// node closes its clients' connections. Empty when it does not answer.
std::string role_of(const sentinel_set& set, std::uint16_t port) {
  try {
    auto r = set.client(port).command({"ROLE"});
    if (r.is_array() && !r.elements.empty()) return r.elements[0].str;
  } catch (const std::runtime_error&) {
  }
  return {};
}

// `key` set on the master and acknowledged by the replica, so no failover can lose it.
void write_replicated(const sentinel_set& set, const std::string& key) {
  auto master = set.client(set.master_port());
  ASSERT_EQ(master.command({"SET", key, "v"}), reply::make_status("OK"));
  ASSERT_EQ(master.command({"WAIT", "1", "5000"}), reply::make_integer(1));
}

class sentinel_fixture : public ::testing::Test {
 protected:
  // Whatever an earlier test left (a failover, a dead or paused process) is repaired first.
  void SetUp() override { set.restore(); }

  sentinel_set& set = shared_sentinel_set();
};

}  // namespace

// First in the file, so it is the test that starts the shared set and times it.
TEST(sentinel_set_start, one_master_one_replica_and_three_sentinels_that_agree) {
  const auto asked = steady::now();
  auto& set = shared_sentinel_set();
  std::cout << "[ sentinel ] set started (or found running) in " << ms(steady::now() - asked)
            << " ms\n";
  EXPECT_EQ(set.health_problem(), "");

  const auto data = set.data_ports();
  const auto sentinels = set.sentinel_ports();
  ASSERT_EQ(data.size(), 2u);
  ASSERT_EQ(sentinels.size(), 3u);
  std::set<std::uint16_t> distinct(data.begin(), data.end());
  distinct.insert(sentinels.begin(), sentinels.end());
  EXPECT_EQ(distinct.size(), 5u);
  EXPECT_EQ(set.url(), "redis-sentinel://127.0.0.1:" + std::to_string(sentinels[0]) +
                           ",127.0.0.1:" + std::to_string(sentinels[1]) +
                           ",127.0.0.1:" + std::to_string(sentinels[2]) + "/relock-master");

  const auto master = set.master_port();
  const auto replica = set.replica_port();
  EXPECT_TRUE(distinct.count(master));
  EXPECT_NE(master, replica);
  EXPECT_TRUE(replica == data[0] || replica == data[1]);
  EXPECT_EQ(role_of(set, master), "master");
  // ["slave", host, port, link state, offset]
  auto role = set.client(replica).command({"ROLE"});
  ASSERT_GE(role.elements.size(), 4u) << to_string(role);
  EXPECT_EQ(role.elements[0].str, "slave");
  EXPECT_EQ(role.elements[2].integer, master);
  EXPECT_EQ(role.elements[3].str, "connected");
  for (std::size_t i = 0; i < sentinels.size(); ++i) {
    auto quorum = set.sentinel(i).command({"SENTINEL", "CKQUORUM", "relock-master"});
    EXPECT_TRUE(quorum.str.starts_with("OK 3 usable Sentinels")) << i << ": " << to_string(quorum);
  }

  write_replicated(set, "fixture:start");
  EXPECT_EQ(set.client(replica).command({"GET", "fixture:start"}), reply::make_string("v"));
  set.client(master).command({"DEL", "fixture:start"});
}

TEST_F(sentinel_fixture, a_switchover_moves_the_master_and_demotes_the_old_one_later) {
  const auto old_master = set.master_port();
  const auto old_replica = set.replica_port();
  write_replicated(set, "fixture:switchover");

  const auto asked = steady::now();
  const auto new_master = set.failover();
  const auto switched = steady::now();
  EXPECT_EQ(new_master, old_replica);
  EXPECT_EQ(set.master_port(), new_master);
  EXPECT_EQ(set.client(new_master).command({"GET", "fixture:switchover"}), reply::make_string("v"));

  // The demoted master window: the old master still says it is one, with no replica, until a
  // sentinel converts it.
  EXPECT_EQ(role_of(set, old_master), "master");
  EXPECT_NE(set.health_problem(), "");
  EXPECT_TRUE(wait_until([&] { return role_of(set, old_master) == "slave"; }, 30s, 10ms));
  const auto demoted = steady::now();
  set.wait_healthy();
  const auto healthy = steady::now();
  EXPECT_EQ(set.client(old_master).command({"GET", "fixture:switchover"}), reply::make_string("v"));

  std::cout << "[ sentinel ] SENTINEL FAILOVER: new master after " << ms(switched - asked)
            << " ms; the old master said ROLE master for " << ms(demoted - switched) << " ms more ("
            << ms(demoted - asked) << " ms after SENTINEL FAILOVER); healthy "
            << ms(healthy - switched) << " ms after the switch\n";
  RecordProperty("switchover_ms", static_cast<int>(ms(switched - asked)));
  RecordProperty("demoted_master_window_ms", static_cast<int>(ms(demoted - switched)));
  set.client(new_master).command({"DEL", "fixture:switchover"});
}

TEST_F(sentinel_fixture, a_killed_master_fails_over_and_comes_back_as_a_replica) {
  const auto old_master = set.master_port();
  const auto replica = set.replica_port();
  write_replicated(set, "fixture:crash");

  const auto killed = steady::now();
  set.kill(old_master);
  EXPECT_FALSE(set.running(old_master));
  EXPECT_NE(set.health_problem(), "");
  const auto new_master = set.wait_for_new_master(old_master, 60s);
  const auto promoted = steady::now();
  EXPECT_EQ(new_master, replica);
  EXPECT_EQ(set.client(new_master).command({"GET", "fixture:crash"}), reply::make_string("v"));

  set.restart(old_master);
  const auto restarted = steady::now();
  EXPECT_TRUE(set.running(old_master));
  // Started as a replica: it never says ROLE master, empty, in between.
  EXPECT_EQ(role_of(set, old_master), "slave");
  set.wait_healthy();
  const auto healthy = steady::now();
  EXPECT_EQ(set.client(old_master).command({"GET", "fixture:crash"}), reply::make_string("v"));

  std::cout << "[ sentinel ] master SIGKILL: new master after " << ms(promoted - killed)
            << " ms (down-after " << set.options().down_after.count()
            << " ms); the old one restarted as its replica, healthy " << ms(healthy - restarted)
            << " ms later\n";
  RecordProperty("crash_failover_ms", static_cast<int>(ms(promoted - killed)));
  set.client(new_master).command({"DEL", "fixture:crash"});
}

TEST_F(sentinel_fixture, a_paused_replica_is_flagged_down_and_heals_once_resumed) {
  const auto master = set.master_port();
  const auto replica = set.replica_port();
  set.pause(replica);
  const auto paused = steady::now();
  EXPECT_TRUE(set.running(replica));
  EXPECT_NE(set.health_problem().find("paused"), std::string::npos) << set.health_problem();
  auto m = set.client(master);
  m.command({"SET", "fixture:paused", "v"});
  EXPECT_EQ(m.command({"WAIT", "1", "100"}), reply::make_integer(0)) << "a paused replica acked";

  // After down-after the sentinels flag it, and a client counting replicas counts none.
  auto flagged = [&] {
    auto replicas = set.sentinel(0).command({"SENTINEL", "REPLICAS", "relock-master"});
    return !replicas.elements.empty() &&
           to_string(replicas.elements[0]).find("s_down") != std::string::npos;
  };
  EXPECT_TRUE(wait_until(flagged, 10s, 10ms));
  const auto noticed = steady::now();

  set.resume(replica);
  const auto resumed = steady::now();
  set.wait_healthy();
  const auto healthy = steady::now();
  EXPECT_EQ(m.command({"WAIT", "1", "1000"}), reply::make_integer(1));
  std::cout << "[ sentinel ] paused replica: flagged s_down after " << ms(noticed - paused)
            << " ms; healthy " << ms(healthy - resumed) << " ms after resuming it\n";
  m.command({"DEL", "fixture:paused"});
}

TEST_F(sentinel_fixture, restore_restarts_a_killed_replica_and_resumes_a_paused_sentinel) {
  const auto master = set.master_port();
  const auto replica = set.replica_port();
  set.kill(replica);
  set.pause_sentinel(1);
  EXPECT_NE(set.health_problem(), "");
  // Long enough for the others to flag the replica down, and for sentinel 1 to enter TILT mode
  // once resumed (its clock jumped by over 2 s).
  auto flagged = [&] {
    auto replicas = set.sentinel(0).command({"SENTINEL", "REPLICAS", "relock-master"});
    return !replicas.elements.empty() &&
           to_string(replicas.elements[0]).find("s_down") != std::string::npos;
  };
  EXPECT_TRUE(wait_until(flagged, 10s, 10ms));

  const auto started = steady::now();
  set.restore();
  std::cout << "[ sentinel ] restore after a killed replica and a sentinel paused into TILT mode: "
            << ms(steady::now() - started) << " ms\n";
  EXPECT_EQ(set.health_problem(), "");
  EXPECT_TRUE(set.running(replica));
  EXPECT_EQ(set.master_port(), master);
  EXPECT_EQ(role_of(set, replica), "slave");
  auto resumed = set.sentinel(1);
  EXPECT_NE(resumed.command({"INFO", "sentinel"}).str.find("sentinel_tilt:0"), std::string::npos);
  // Its TILT period is Sentinel's again.
  auto settings = resumed.command({"SENTINEL", "DEBUG"}).elements;
  for (std::size_t i = 0; i + 1 < settings.size(); i += 2) {
    if (settings[i].str == "TILT-PERIOD") {
      EXPECT_EQ(settings[i + 1].str, "30000");
    }
  }
}

TEST_F(sentinel_fixture, restore_waits_for_the_failover_of_a_killed_master) {
  const auto old_master = set.master_port();
  const auto replica = set.replica_port();
  set.kill(old_master);

  const auto started = steady::now();
  set.restore();
  std::cout << "[ sentinel ] restore after a killed master (failover included): "
            << ms(steady::now() - started) << " ms\n";
  EXPECT_EQ(set.health_problem(), "");
  EXPECT_EQ(set.master_port(), replica);
  EXPECT_TRUE(set.running(old_master));
  EXPECT_EQ(role_of(set, old_master), "slave");
}

// A private set, so the shared one keeps no passwords the other tests would need.
TEST(sentinel_set_passwords, data_nodes_and_sentinels_each_want_their_own) {
  const auto asked = steady::now();
  sentinel_set guarded({.sentinels = 1,
                        .quorum = 1,
                        .data_password = "data pw",
                        .sentinel_password = "sentinel \"pw\""});
  std::cout << "[ sentinel ] a set with passwords and 1 sentinel started in "
            << ms(steady::now() - asked) << " ms\n";
  EXPECT_EQ(guarded.health_problem(), "");
  EXPECT_EQ(guarded.url().find("pw"), std::string::npos) << guarded.url();

  const auto master = guarded.master_port();
  raw_client anonymous("127.0.0.1", master);
  EXPECT_EQ(anonymous.command({"ROLE"}).error_code(), "NOAUTH");
  raw_client anonymous_sentinel("127.0.0.1", guarded.sentinel_ports().at(0));
  EXPECT_EQ(anonymous_sentinel.command({"SENTINEL", "MASTERS"}).error_code(), "NOAUTH");
  EXPECT_EQ(role_of(guarded, master), "master");
  EXPECT_EQ(role_of(guarded, guarded.replica_port()), "slave");
  EXPECT_TRUE(guarded.sentinel(0).command({"SENTINEL", "MASTERS"}).is_array());
}
