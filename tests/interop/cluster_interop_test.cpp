// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson, both in cluster mode, on the shared test cluster (issue #16):
// scenarios 1-3 and 5 of lock_interop_test.cpp (issue #9), with names on different masters,
// once per pairing in redisson_cluster_fixture.hpp (a Redisson version and the pub/sub mode
// both sides use).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_cluster_fixture.hpp"
#include "support/raw_client.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

using interval = std::pair<std::int64_t, std::int64_t>;  // CLOCK_MONOTONIC ns: acquired, released

class redisson_cluster_interop : public redisson_cluster_fixture {
 protected:
  // A connection to the master that serves `key`.
  static raw_client node_of(const std::string& key) {
    return cluster().client(cluster().owner_of(key));
  }
};

}  // namespace

// 1. On each of two masters at once, two relock threads and two Redisson owners increment one
// counter (in the lock's slot) under one lock: exact counts, no overlapping holds.
TEST_P(redisson_cluster_interop, mutual_exclusion_across_languages_on_two_masters) {
  constexpr int rounds = 500;
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 2u);
  const std::string names[2] = {name_on(masters[0], "shared:"), name_on(masters[1], "shared:")};
  auto counter = [](const std::string& name) { return "{" + name + "}:counter"; };
  for (const auto& name : names) node_of(counter(name)).command({"DEL", counter(name)});
  auto j = java();
  relock::client client(settings());

  std::vector<std::string> java_runs[2];
  const char* owners[2][2] = {{"a", "b"}, {"c", "d"}};
  for (int n = 0; n < 2; ++n) {
    for (const char* owner : owners[n]) {
      java_runs[n].push_back(j.send(owner, "incloop " + names[n] + " " + counter(names[n]) + " " +
                                               std::to_string(rounds) + " 50"));
    }
  }
  std::vector<interval> intervals[2][2];  // [name][thread]
  std::vector<std::thread> threads;
  for (int n = 0; n < 2; ++n) {
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, n, t] {
        auto raw = node_of(counter(names[n]));
        auto lk = client.lock(names[n]);
        for (int i = 0; i < rounds; ++i) {
          std::unique_lock<relock::Lock> guard(lk);
          auto acquired = now_ns();
          auto v = raw.command({"GET", counter(names[n])});
          std::int64_t count = v.is_nil() ? 0 : std::stoll(v.str);
          std::this_thread::sleep_for(50us);  // read, pause, write: only the lock protects it
          raw.command({"SET", counter(names[n]), std::to_string(count + 1)});
          intervals[n][t].push_back({acquired, now_ns()});
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  for (int n = 0; n < 2; ++n) {
    std::vector<interval> all = intervals[n][0];
    all.insert(all.end(), intervals[n][1].begin(), intervals[n][1].end());
    for (const auto& id : java_runs[n]) {
      auto r = j.wait_reply(id, 120s);
      ASSERT_TRUE(r.value("ok", false)) << r.dump();
      for (const auto& iv : r["result"]["intervals"]) {
        all.push_back({iv[0].get<std::int64_t>(), iv[1].get<std::int64_t>()});
      }
    }
    EXPECT_EQ(node_of(counter(names[n])).command({"GET", counter(names[n])}).str,
              std::to_string(4 * rounds))
        << names[n];
    ASSERT_EQ(all.size(), 4u * rounds);
    std::sort(all.begin(), all.end());
    int overlaps = 0;
    for (std::size_t i = 1; i < all.size(); ++i) overlaps += all[i].first < all[i - 1].second;
    EXPECT_EQ(overlaps, 0) << names[n];
    node_of(counter(names[n])).command({"DEL", counter(names[n])});  // the cluster is shared
  }
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message; once with
// the lock (and its channel's slot) on every master.
TEST_P(redisson_cluster_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    const std::string name = name_on(master, "j-holds:");
    auto lk = client.lock(name);
    ASSERT_EQ(j.call_ok("a", "lock " + name + " 30000"), true);

    auto started = steady::now();
    EXPECT_FALSE(lk.try_lock(500ms));
    auto took = steady::now() - started;
    EXPECT_GE(took, 500ms);
    EXPECT_LT(took, 2s);

    auto waiting = try_on_thread(lk, 20s);
    ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel(name)) >= 1; }, 5s));
    auto released = steady::now();
    ASSERT_EQ(j.call_ok("a", "unlock " + name), true);
    ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
    auto [got, at] = waiting.get();
    EXPECT_TRUE(got);
    EXPECT_LT(at - released, 1s);  // the lease had 29 s left: it woke on the message
    std::printf("master %s: relock woke %lld us after Redisson's unlock\n",
                master.address().c_str(),
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::microseconds>(at - released).count()));
  }
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock; once
// with the lock on every master.
TEST_P(redisson_cluster_interop,
       redisson_waits_on_a_relock_hold_and_wakes_on_unlock_and_force_unlock) {
  auto j = java();
  EXPECT_EQ(j.sharded_subscription(), GetParam().sharded_subscription);
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    const std::string name = name_on(master, "c-holds:");
    auto lk = client.lock(name);

    lk.lock(30s);
    auto id = j.send("a", "trylock " + name + " 20000");
    // Redisson subscribed the way this pairing publishes: else only the lease would end its wait.
    ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel(name)) >= 1; }, 5s));
    EXPECT_THROW(j.wait_reply(id, 100ms), std::runtime_error);  // still waiting
    auto released = steady::now();
    lk.unlock();
    auto r = j.wait_reply(id, 5s);
    EXPECT_EQ(r["result"], true) << r.dump();
    EXPECT_LT(ns_after(released, r), 1'000'000'000);
    ASSERT_EQ(j.call_ok("a", "unlock " + name), true);

    lk.lock(30s);
    auto second = j.send("b", "trylock " + name + " 20000");
    ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel(name)) >= 1; }, 5s));
    EXPECT_THROW(j.wait_reply(second, 100ms), std::runtime_error);
    auto forced = steady::now();
    EXPECT_TRUE(lk.force_unlock());
    auto r2 = j.wait_reply(second, 5s);
    EXPECT_EQ(r2["result"], true) << r2.dump();
    EXPECT_LT(ns_after(forced, r2), 1'000'000'000);
    ASSERT_EQ(j.call_ok("b", "unlock " + name), true);
    std::printf(
        "master %s: Redisson woke %lld us after relock's unlock, %lld us after its "
        "force_unlock\n",
        master.address().c_str(), static_cast<long long>(ns_after(released, r) / 1000),
        static_cast<long long>(ns_after(forced, r2) / 1000));
  }
}

// 5. Both watchdogs keep their holds alive while the other side waits: four 2 s leases, relock's
// hold on one master and Redisson's on another.
TEST_P(redisson_cluster_interop, watchdogs_keep_holds_alive_against_the_other_side) {
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 2u);
  auto j = java(2s);
  relock::client client(settings(2s));

  const std::string mine = name_on(masters[0], "dog:");
  auto lk = client.lock(mine);
  lk.lock();
  auto java_wait = j.call("a", "trylock " + mine + " 8000", 20s);
  EXPECT_EQ(java_wait["result"], false) << java_wait.dump();
  EXPECT_GE(java_wait["end_ns"].get<std::int64_t>() - java_wait["start_ns"].get<std::int64_t>(),
            7'900'000'000);
  EXPECT_TRUE(lk.is_held_by_current_thread());
  // Held for four leases by renewals, not by a long lease.
  EXPECT_LE(node_of(mine).command({"PTTL", mine}).integer, 2000);
  lk.unlock();

  const std::string theirs = name_on(masters[1], "dog:");
  auto other = client.lock(theirs);
  ASSERT_EQ(j.call_ok("b", "lock " + theirs), true);
  auto started = steady::now();
  EXPECT_FALSE(other.try_lock(8s));
  EXPECT_GE(steady::now() - started, 8s);
  EXPECT_TRUE(other.is_held_by(j.owner_field("b")));
  EXPECT_LE(node_of(theirs).command({"PTTL", theirs}).integer, 2000);
  j.call_ok("b", "unlock " + theirs);
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_cluster_interop,
                         ::testing::ValuesIn(relock::test::cluster_peers()), [](const auto& info) {
                           return relock::test::cluster_peer_name(info.param);
                         });
