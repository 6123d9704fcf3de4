// SPDX-License-Identifier: Apache-2.0
// red_lock on three real, independent servers: a quorum holds with one server stopped or
// killed, two away fail within the wait leaving no member behind, and the validity is honest.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <relock/client.hpp>
#include <relock/red_lock.hpp>

#include "support/lock_env.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// The address of `server` as another spelling of it: localhost for 127.0.0.1.
std::string localhost_url(const redis_server& server) {
  std::string url = server.url();
  const auto at = url.find("127.0.0.1");
  if (at != std::string::npos) url.replace(at, 9, "localhost");
  return url;
}

struct three_servers {
  redis_server servers[3];
  std::vector<std::unique_ptr<relock::client>> clients;
  std::mutex heard_mutex;
  std::vector<int> unlock_errors_heard_by;  // the client whose on_unlock_error was called

  three_servers() {
    for (int i = 0; i < 3; ++i) {
      auto cfg = settings_for(servers[i]);
      cfg.command_timeout = 500ms;  // an unlock to a stopped server gives up soon
      cfg.on_unlock_error = [this, i](std::string_view, std::error_code, std::string_view) {
        std::lock_guard guard(heard_mutex);
        unlock_errors_heard_by.push_back(i);
      };
      clients.push_back(std::make_unique<relock::client>(cfg));
    }
  }
  std::vector<int> heard() {
    std::lock_guard guard(heard_mutex);
    return unlock_errors_heard_by;
  }
  relock::red_lock red_lock(const std::string& name) {
    return relock::red_lock(
        {clients[0]->lock(name), clients[1]->lock(name), clients[2]->lock(name)});
  }
  long long keys(const std::string& name) {
    long long n = 0;
    for (auto& s : servers) {
      if (s.running()) n += raw_client::to(s).command({"EXISTS", name}).integer;
    }
    return n;
  }
};

}  // namespace

TEST(red_lock, holds_on_all_three_and_reports_a_validity_below_the_lease_by_the_elapsed_time) {
  three_servers set;
  auto red = set.red_lock("r");
  EXPECT_EQ(red.quorum(), 2u);
  const auto started = std::chrono::steady_clock::now();
  const auto got = red.acquire({.lease = 10s, .wait = 3s});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(got.acquired);
  EXPECT_EQ(got.members_held, 3u);
  EXPECT_GT(got.validity, 0ms);
  EXPECT_LE(got.validity + elapsed, 10s);
  EXPECT_LE(got.validity, 10s - 102ms);  // the drift: 1% of the lease + 2 ms
  EXPECT_EQ(set.keys("r"), 3);
  EXPECT_TRUE(red.unlock_members().empty());
  EXPECT_EQ(set.keys("r"), 0);
}

TEST(red_lock, a_stopped_server_costs_one_vote_not_the_lock) {
  three_servers set;
  auto red = set.red_lock("r");
  set.servers[1].pause();
  const auto started = std::chrono::steady_clock::now();
  const auto got = red.acquire({.lease = 10s, .wait = 1500ms});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(got.acquired);
  EXPECT_EQ(got.members_held, 2u);
  EXPECT_LE(got.validity + elapsed, 10s);
  EXPECT_LT(elapsed, 1500ms);  // the stopped member's budget is a third of the wait
  const auto failures = red.unlock_members();
  ASSERT_EQ(failures.size(), 1u);  // the stopped server, reported
  EXPECT_TRUE(failures[0].ec == relock::errc::timeout || failures[0].ec == relock::errc::connection)
      << failures[0].detail;
  set.servers[1].resume();
  // What sat in the stopped server's socket (the try, then its take-back or the unlock) runs
  // now: nothing is left held.
  EXPECT_TRUE(wait_until([&] { return set.keys("r") == 0; }, 5s));
}

TEST(red_lock, a_killed_server_costs_one_vote_and_its_unlock_is_reported) {
  three_servers set;
  auto red = set.red_lock("r");
  set.servers[2].kill();
  const auto got = red.acquire({.wait = 1500ms});  // the watchdog's lease
  ASSERT_TRUE(got.acquired);
  EXPECT_EQ(got.members_held, 2u);
  EXPECT_EQ(set.keys("r"), 2);
  std::error_code ec;
  red.unlock(ec);
  EXPECT_TRUE(ec == relock::errc::connection || ec == relock::errc::timeout) << ec.message();
  EXPECT_EQ(set.keys("r"), 0);
}

TEST(red_lock, two_servers_away_fail_within_the_wait_leaving_no_member_behind) {
  for (const bool kill : {false, true}) {
    SCOPED_TRACE(kill ? "SIGKILL" : "SIGSTOP");
    three_servers set;
    auto red = set.red_lock("r");
    for (int i : {0, 2}) {
      if (kill) {
        set.servers[i].kill();
      } else {
        set.servers[i].pause();
      }
    }
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { red.acquire({.lease = 10s, .wait = 900ms}); }),
              relock::errc::connection);
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_LT(took, 900ms + 1s) << "ended " << (took - 900ms) / 1ms << " ms after its wait";
    EXPECT_EQ(raw_client::to(set.servers[1]).command({"EXISTS", "r"}).integer, 0);
    if (!kill) {
      for (int i : {0, 2}) set.servers[i].resume();
      EXPECT_TRUE(wait_until([&] { return set.keys("r") == 0; }, 5s));
    }
  }
}

TEST(red_lock, a_second_holder_is_refused_and_leaves_nothing) {
  three_servers set;
  auto first = set.red_lock("r");
  ASSERT_TRUE(first.acquire({.lease = 10s, .wait = 1s}).acquired);
  auto second = set.red_lock("r");
  const auto got = on_other_thread([&] { return second.acquire({.lease = 10s, .wait = 300ms}); });
  EXPECT_FALSE(got.acquired);
  for (auto& s : set.servers) EXPECT_EQ(raw_client::to(s).command({"HLEN", "r"}).integer, 1);
  first.unlock();
  EXPECT_TRUE(on_other_thread([&] { return second.try_lock(1s); }));
}

TEST(red_lock, sets_that_cannot_be_a_quorum_of_independent_servers_are_refused) {
  three_servers set;
  auto& c = set.clients;
  EXPECT_EQ(error_of([&] {
              relock::red_lock two({c[0]->lock("r"), c[1]->lock("r")});
            }),
            relock::errc::invalid_argument);
  EXPECT_EQ(error_of([&] {
              relock::red_lock shared({c[0]->lock("r"), c[1]->lock("r"), c[1]->lock("s")});
            }),
            relock::errc::invalid_argument);
  EXPECT_EQ(error_of([&] {
              relock::red_lock drift({c[0]->lock("r"), c[1]->lock("r"), c[2]->lock("r")}, {1.5});
            }),
            relock::errc::invalid_argument);
}

TEST(red_lock, two_clients_of_one_server_are_one_vote_however_its_address_is_spelled) {
  three_servers set;
  auto& c = set.clients;
  auto cfg = settings_for(set.servers[0]);
  cfg.url = localhost_url(set.servers[0]);
  ASSERT_NE(cfg.url, set.servers[0].url());
  relock::client again(cfg);
  // Told apart by the server itself (INFO's run_id), not by the URL.
  EXPECT_EQ(relock::detail::core_of(again)->server_id(),
            relock::detail::core_of(*c[0])->server_id());
  EXPECT_NE(relock::detail::core_of(*c[0])->server_id(),
            relock::detail::core_of(*c[1])->server_id());
  try {
    relock::red_lock twice({c[0]->lock("r"), c[1]->lock("r"), again.lock("r")});
    ADD_FAILURE() << "a red_lock counting one server twice was accepted";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), relock::errc::invalid_argument);
    const std::string what = e.what();
    const auto port = std::to_string(set.servers[0].port());
    EXPECT_NE(what.find("member 0"), std::string::npos) << what;
    EXPECT_NE(what.find("member 2"), std::string::npos) << what;
    EXPECT_NE(what.find("127.0.0.1:" + port), std::string::npos) << what;
    EXPECT_NE(what.find("localhost:" + port), std::string::npos) << what;
    EXPECT_NE(what.find(relock::detail::core_of(again)->server_id()), std::string::npos) << what;
  }
  // Nor is another database of the server another vote.
  auto db1 = settings_for(set.servers[0]);
  db1.url += "/1";
  relock::client other_db(db1);
  EXPECT_EQ(error_of([&] {
              relock::red_lock dbs({c[0]->lock("r"), c[1]->lock("r"), other_db.lock("r")});
            }),
            relock::errc::invalid_argument);
  // Three servers of their own are three votes.
  relock::red_lock three({c[0]->lock("r"), c[1]->lock("r"), c[2]->lock("r")});
  EXPECT_TRUE(three.try_lock(1s));
  three.unlock();
}

TEST(red_lock, an_unlock_failure_names_the_member_that_failed_and_is_heard_by_its_client) {
  three_servers set;
  // The stopped member's hold stays until its lease ends: each round has a name of its own.
  auto red = set.red_lock("r");
  ASSERT_TRUE(red.acquire({.lease = 10s, .wait = 3s}).acquired);
  set.servers[2].pause();
  const auto failures = red.unlock_members();
  set.servers[2].resume();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].index, 2u);
  EXPECT_EQ(failures[0].server, "127.0.0.1:" + std::to_string(set.servers[2].port()));
  EXPECT_EQ(failures[0].member, "r");
  EXPECT_TRUE(failures[0].ec == relock::errc::timeout || failures[0].ec == relock::errc::connection)
      << failures[0].detail;
  EXPECT_TRUE(set.heard().empty());  // unlock_members() hands the failures to the caller

  // Plain unlock() tells the failing member's own client, and no other.
  auto other = set.red_lock("s");
  ASSERT_TRUE(other.acquire({.lease = 10s, .wait = 3s}).acquired);
  set.servers[1].pause();
  other.unlock();
  set.servers[1].resume();
  EXPECT_EQ(set.heard(), std::vector<int>{1});
}

TEST(red_lock, the_clients_of_one_cluster_are_one_vote_whichever_seed_they_came_in_by) {
  // A name lives on one master of a cluster, the same for every client of it.
  redis_cluster cluster({.masters = 3, .replicas_per_master = 0});
  const auto& nodes = cluster.nodes();
  relock::config by_first;
  by_first.url = "redis-cluster://" + nodes[0].address();
  relock::config by_last;
  by_last.url = "redis-cluster://localhost:" + std::to_string(nodes[2].port);
  relock::client a(by_first);
  relock::client b(by_last);
  EXPECT_EQ(relock::detail::core_of(a)->server_id(), relock::detail::core_of(b)->server_id());
  redis_server alone;
  relock::client c(settings_for(alone));
  EXPECT_NE(relock::detail::core_of(a)->server_id(), relock::detail::core_of(c)->server_id());
  EXPECT_EQ(error_of([&] {
              relock::red_lock shared({a.lock("r"), c.lock("r"), b.lock("r")});
            }),
            relock::errc::invalid_argument);
}

TEST(red_lock, an_acquire_that_fails_names_the_members_that_failed) {
  three_servers set;
  auto red = set.red_lock("r");
  set.servers[0].kill();
  set.servers[2].kill();
  std::string what;
  try {
    red.acquire({.lease = 10s, .wait = 300ms});
    ADD_FAILURE() << "acquired with two of three servers gone";
  } catch (const relock::error& e) {
    what = e.what();
  }
  const auto at = [&](int i) { return "127.0.0.1:" + std::to_string(set.servers[i].port()); };
  // Too few for a quorum means both of them, each by its index and server.
  EXPECT_NE(what.find("member 0 ('r' on " + at(0) + ")"), std::string::npos) << what;
  EXPECT_NE(what.find("member 2 ('r' on " + at(2) + ")"), std::string::npos) << what;
  EXPECT_EQ(what.find("member 1"), std::string::npos) << what;
  EXPECT_EQ(what.find(at(1)), std::string::npos) << what;
}

// Issue 30: a server that does not answer when its client is to be made costs its vote, as one
// lost later does. Making the client gives up after its connect timeout; the red_lock of the
// other two, with that server named as never reached, holds on both within its wait.
TEST(red_lock, a_server_stopped_before_its_client_is_made_costs_one_vote) {
  redis_server servers[3];
  servers[1].pause();
  auto stopped = settings_for(servers[1]);
  stopped.connect_timeout = 300ms;
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { relock::client never(stopped); }), relock::errc::connection);
  const auto gave_up = std::chrono::steady_clock::now() - started;
  EXPECT_LT(gave_up, 300ms + 1s) << gave_up / 1ms << " ms";

  relock::client a(settings_for(servers[0]));
  relock::client c(settings_for(servers[2]));
  relock::red_lock red({a.lock("r"), c.lock("r")}, {.unreached = {servers[1].url()}});
  EXPECT_EQ(red.quorum(), 2u);  // of three servers, not of two members
  started = std::chrono::steady_clock::now();
  const auto got = red.acquire({.lease = 10s, .wait = 1500ms});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(got.acquired);
  EXPECT_EQ(got.members_held, 2u);
  EXPECT_LT(elapsed, 1500ms) << elapsed / 1ms << " ms";
  EXPECT_LE(got.validity + elapsed, 10s);
  for (int i : {0, 2}) EXPECT_EQ(raw_client::to(servers[i]).command({"EXISTS", "r"}).integer, 1);
  EXPECT_TRUE(red.unlock_members().empty());  // the unreached has no member to release
  for (int i : {0, 2}) EXPECT_EQ(raw_client::to(servers[i]).command({"EXISTS", "r"}).integer, 0);
  servers[1].resume();
  EXPECT_EQ(raw_client::to(servers[1]).command({"EXISTS", "r"}).integer, 0);
}

// With fewer members than a quorum no attempt could succeed: the acquire fails at once, with
// the connection error (as when too many members are away), naming the servers never reached.
TEST(red_lock, too_few_servers_reached_fail_at_once_naming_those_never_reached) {
  redis_server servers[3];
  servers[0].pause();
  servers[2].pause();
  relock::client b(settings_for(servers[1]));
  relock::red_lock red({b.lock("r")}, {.unreached = {servers[0].url(), servers[2].url()}});
  EXPECT_EQ(red.quorum(), 2u);
  const auto started = std::chrono::steady_clock::now();
  std::error_code ec;
  std::string what;
  try {
    red.acquire({.lease = 10s, .wait = 3s});
    ADD_FAILURE() << "acquired with one server of three";
  } catch (const relock::error& e) {
    ec = e.code();
    what = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(ec, relock::errc::connection);
  EXPECT_LT(took, 500ms) << took / 1ms << " ms";  // not the 3 s wait: nothing to wait for
  EXPECT_NE(what.find("2 of 3 members unreachable"), std::string::npos) << what;
  for (int i : {0, 2}) EXPECT_NE(what.find(servers[i].url()), std::string::npos) << what;
  EXPECT_EQ(raw_client::to(servers[1]).command({"EXISTS", "r"}).integer, 0);
  // Two members and one never reached are three servers; one member and one, two: refused.
  EXPECT_EQ(
      error_of([&] { relock::red_lock two({b.lock("r")}, {.unreached = {servers[0].url()}}); }),
      relock::errc::invalid_argument);
  for (int i : {0, 2}) servers[i].resume();
}
