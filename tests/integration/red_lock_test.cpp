// RedLock on three real, independent servers: a quorum holds with one server stopped or
// killed, two away fail within the wait leaving no member behind, and the validity is honest.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <relock/client.hpp>
#include <relock/red_lock.hpp>

#include "integration/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

struct three_servers {
  redis_server servers[3];
  std::vector<std::unique_ptr<relock::client>> clients;

  three_servers() {
    for (auto& s : servers) {
      auto cfg = settings_for(s);
      cfg.command_timeout = 500ms;  // an unlock to a stopped server gives up soon
      clients.push_back(std::make_unique<relock::client>(cfg));
    }
  }
  relock::RedLock red_lock(const std::string& name) {
    return relock::RedLock(
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
              relock::RedLock two({c[0]->lock("r"), c[1]->lock("r")});
            }),
            relock::errc::invalid_argument);
  EXPECT_EQ(error_of([&] {
              relock::RedLock shared({c[0]->lock("r"), c[1]->lock("r"), c[1]->lock("s")});
            }),
            relock::errc::invalid_argument);
  EXPECT_EQ(error_of([&] {
              relock::RedLock drift({c[0]->lock("r"), c[1]->lock("r"), c[2]->lock("r")}, {1.5});
            }),
            relock::errc::invalid_argument);
}
