// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson, both in cluster mode, on the shared test cluster (issue #16):
// scenarios 1-3 (contention_scenarios.hpp) and 5 of issue #9, with names on different masters,
// once per pairing in redisson_cluster_fixture.hpp (a Redisson version and the pub/sub mode
// both sides use).
#include <gtest/gtest.h>

#include <string>

#include <relock/client.hpp>

#include "contention_scenarios.hpp"
#include "redisson_cluster_fixture.hpp"
#include "support/raw_client.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

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
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 2u);
  auto j = java();
  relock::client client(settings());
  contention::mutual_exclusion(j, client,
                               {name_on(masters[0], "shared:"), name_on(masters[1], "shared:")},
                               contention_setting());
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message; once with
// the lock (and its channel's slot) on every master.
TEST_P(redisson_cluster_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    ASSERT_NO_FATAL_FAILURE(contention::relock_waits_on_a_redisson_hold(
        j, client, name_on(master, "j-holds:"), contention_setting()));
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
    ASSERT_NO_FATAL_FAILURE(contention::redisson_waits_on_a_relock_hold(
        j, client, name_on(master, "c-holds:"), contention_setting()));
  }
}

// 5. Both watchdogs keep their holds alive while the other side waits: two 4 s leases, relock's
// hold on one master and Redisson's on another (2 s leases let a Redisson renewal come too late
// once under a full ASan run, as in lock_interop_test.cpp).
TEST_P(redisson_cluster_interop, watchdogs_keep_holds_alive_against_the_other_side) {
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 2u);
  auto j = java(4s);
  relock::client client(settings(4s));

  const std::string mine = name_on(masters[0], "dog:");
  auto lk = client.lock(mine);
  lk.lock();
  auto java_wait = j.call("a", "trylock " + mine + " 8000", 20s);
  EXPECT_EQ(java_wait["result"], false) << java_wait.dump();
  EXPECT_GE(java_wait["end_ns"].get<std::int64_t>() - java_wait["start_ns"].get<std::int64_t>(),
            7'900'000'000);
  EXPECT_TRUE(lk.is_held_by_current_thread());
  // Held for two leases by renewals, not by a long lease.
  EXPECT_LE(node_of(mine).command({"PTTL", mine}).integer, 4000);
  lk.unlock();

  const std::string theirs = name_on(masters[1], "dog:");
  auto other = client.lock(theirs);
  ASSERT_EQ(j.call_ok("b", "lock " + theirs), true);
  auto started = steady::now();
  EXPECT_FALSE(other.try_lock(8s));
  EXPECT_GE(steady::now() - started, 8s);
  EXPECT_TRUE(other.is_held_by(j.owner_field("b")));
  EXPECT_LE(node_of(theirs).command({"PTTL", theirs}).integer, 4000);
  j.call_ok("b", "unlock " + theirs);
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_cluster_interop,
                         ::testing::ValuesIn(relock::test::cluster_peers()), [](const auto& info) {
                           return relock::test::cluster_peer_name(info.param);
                         });
