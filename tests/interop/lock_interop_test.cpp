// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson contend on the same lock names (issue #9, scenarios 1-7), once
// per Redisson version built by tests/interop/redisson/prepare. Scenarios 1-3 are written once
// for every setting, in contention_scenarios.hpp.
#include <gtest/gtest.h>

#include <string>

#include <relock/client.hpp>

#include "contention_scenarios.hpp"
#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/raw_client.hpp"
#include "support/unlock_latches.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

class redisson_interop : public redisson_fixture {
 protected:
  // The contention scenarios' view of the fixture's server.
  contention::setting contention_setting() {
    contention::setting s;
    s.raw_for = [this](const std::string&) { return raw_client::to(server_); };
    s.subscribers = [this](const std::string& channel) { return subscribers(channel); };
    return s;
  }
};

}  // namespace

// 1. Two relock threads and two Redisson owners increment one counter under one lock.
TEST_P(redisson_interop, mutual_exclusion_across_languages) {
  auto j = java();
  relock::client client(settings());
  contention::mutual_exclusion(j, client, {"shared"}, contention_setting());
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message.
TEST_P(redisson_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  contention::relock_waits_on_a_redisson_hold(j, client, "j-holds", contention_setting());
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock.
TEST_P(redisson_interop, redisson_waits_on_a_relock_hold_and_wakes_on_unlock_and_force_unlock) {
  auto j = java();
  relock::client client(settings());
  contention::redisson_waits_on_a_relock_hold(j, client, "c-holds", contention_setting());
}

// 4. Each side reads the other's holds; a non-owner's unlock fails on both sides.
TEST_P(redisson_interop, each_side_sees_the_others_holds) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("seen");
  lk.lock(20s);
  lk.lock(20s);
  EXPECT_EQ(j.call_ok("a", "islocked seen"), true);
  EXPECT_EQ(j.call_ok("a", "holdcount seen"), 0);  // Redisson counts its own thread's holds
  auto java_ttl = j.call_ok("a", "remainttl seen").get<std::int64_t>();
  EXPECT_GT(java_ttl, 15'000);
  EXPECT_LE(java_ttl, 20'000);
  auto denied = j.call("a", "unlock seen");
  EXPECT_FALSE(denied.value("ok", true));
  EXPECT_NE(denied.value("error", "").find("IllegalMonitorStateException"), std::string::npos);
  EXPECT_EQ(lk.hold_count(), 2);
  lk.unlock();
  lk.unlock();

  ASSERT_EQ(j.call_ok("a", "lock seen 20000"), true);
  ASSERT_EQ(j.call_ok("a", "lock seen 20000"), true);
  const auto field = j.owner_field("a");
  EXPECT_TRUE(lk.is_locked());
  EXPECT_TRUE(lk.is_held_by(field));
  EXPECT_EQ(lk.hold_count(field), 2);
  EXPECT_EQ(lk.hold_count(), 0);
  auto left = lk.remaining_lease();
  ASSERT_TRUE(left);
  EXPECT_GT(*left, 15s);
  std::error_code ec;
  lk.unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  EXPECT_EQ(raw_.command({"HGET", "seen", field}).str, "2");
  j.call_ok("a", "unlock seen");
  j.call_ok("a", "unlock seen");
  EXPECT_FALSE(lk.is_locked());
}

// 5. Both watchdogs keep their holds alive while the other side waits: 8 s, two 4 s leases.
// (With 2 s leases Redisson 4.7.0's renewal, due every 667 ms, once came too late in a full
// ASan run on two cores, and its hold expired under relock's waiting try.)
TEST_P(redisson_interop, watchdogs_keep_holds_alive_against_the_other_side) {
  auto j = java(4s);
  relock::client client(settings(4s));
  auto lk = client.lock("dog");
  lk.lock();
  auto java_wait = j.call("a", "trylock dog 8000", 20s);
  EXPECT_EQ(java_wait["result"], false) << java_wait.dump();
  EXPECT_GE(took_ns(java_wait), 7'900'000'000);
  EXPECT_TRUE(lk.is_held_by_current_thread());
  lk.unlock();

  ASSERT_EQ(j.call_ok("b", "lock dog"), true);
  auto started = steady::now();
  EXPECT_FALSE(lk.try_lock(8s));
  EXPECT_GE(steady::now() - started, 8s);
  EXPECT_TRUE(lk.is_held_by(j.owner_field("b")));
  j.call_ok("b", "unlock dog");
}

// 6. A Redisson process killed while holding: relock gets the lock once its lease runs out.
TEST_P(redisson_interop, a_killed_redisson_holder_frees_the_lock_at_its_lease) {
  auto j = java(2s);
  relock::client client(settings());
  ASSERT_EQ(j.call_ok("a", "lock crash"), true);
  auto lk = client.lock("crash");
  auto ttl = std::chrono::milliseconds(pttl("crash"));
  auto killed = steady::now();
  j.kill(SIGKILL);
  EXPECT_TRUE(lk.try_lock(10s));
  auto took = steady::now() - killed;
  EXPECT_GE(took, ttl - 200ms);  // not before the lease could have run out
  EXPECT_LT(took, 2s + 1500ms);  // within the watchdog timeout plus a margin
  lk.unlock();
}

// 7. Releases by either side leave no unlock latch behind.
TEST_P(redisson_interop, releases_leave_no_unlock_latch_behind) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("latch");
  for (int i = 0; i < 5; ++i) {
    lk.lock();
    lk.lock();
    lk.unlock();
    lk.unlock();
    ASSERT_EQ(j.call_ok("a", "lock latch"), true);
    ASSERT_EQ(j.call_ok("a", "unlock latch"), true);
  }
  EXPECT_TRUE(wait_until([&] { return unlock_latches(raw_) == 0; }, 3s));
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
