// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson contend on the same lock names (issue #9, scenarios 1-7), once
// per Redisson version built by tests/interop/redisson/prepare.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/raw_client.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

class redisson_interop : public redisson_fixture {};

using interval = std::pair<std::int64_t, std::int64_t>;  // CLOCK_MONOTONIC ns: acquired, released

}  // namespace

// 1. Two relock threads and two Redisson owners increment one counter under one lock.
TEST_P(redisson_interop, mutual_exclusion_across_languages) {
  constexpr int rounds = 500;
  auto j = java();
  relock::client client(settings());
  auto a = j.send("a", "incloop shared counter " + std::to_string(rounds) + " 50");
  auto b = j.send("b", "incloop shared counter " + std::to_string(rounds) + " 50");

  std::vector<interval> cpp_intervals[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      auto raw = raw_client::to(server_);
      auto lk = client.lock("shared");
      for (int i = 0; i < rounds; ++i) {
        std::unique_lock<relock::Lock> guard(lk);
        auto acquired = now_ns();
        auto v = raw.command({"GET", "counter"});
        std::int64_t n = v.is_nil() ? 0 : std::stoll(v.str);
        std::this_thread::sleep_for(50us);  // read, pause, write: the lock is all that protects it
        raw.command({"SET", "counter", std::to_string(n + 1)});
        cpp_intervals[t].push_back({acquired, now_ns()});
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<interval> all;
  for (auto& v : cpp_intervals) all.insert(all.end(), v.begin(), v.end());
  for (const auto& id : {a, b}) {
    auto r = j.wait_reply(id, 120s);
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    for (const auto& iv : r["result"]["intervals"]) {
      all.push_back({iv[0].get<std::int64_t>(), iv[1].get<std::int64_t>()});
    }
  }
  EXPECT_EQ(raw_.command({"GET", "counter"}).str, std::to_string(4 * rounds));
  ASSERT_EQ(all.size(), 4u * rounds);
  std::sort(all.begin(), all.end());
  int overlaps = 0;
  for (std::size_t i = 1; i < all.size(); ++i) overlaps += all[i].first < all[i - 1].second;
  EXPECT_EQ(overlaps, 0);
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message.
TEST_P(redisson_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("j-holds");
  ASSERT_EQ(j.call_ok("a", "lock j-holds 30000"), true);

  auto started = steady::now();
  EXPECT_FALSE(lk.try_lock(500ms));
  auto took = steady::now() - started;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 2s);

  auto waiting = try_on_thread(lk, 20s);
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("j-holds")) >= 1; }, 5s));
  auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock j-holds"), true);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto [got, at] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(at - released, 1s);  // the lease had 29 s left: it woke on the message
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock.
TEST_P(redisson_interop, redisson_waits_on_a_relock_hold_and_wakes_on_unlock_and_force_unlock) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("c-holds");
  lk.lock(30s);
  auto id = j.send("a", "trylock c-holds 20000");
  EXPECT_THROW(j.wait_reply(id, 300ms), std::runtime_error);  // still waiting
  auto released = steady::now();
  lk.unlock();
  auto r = j.wait_reply(id, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 1'000'000'000);
  ASSERT_EQ(j.call_ok("a", "unlock c-holds"), true);

  lk.lock(30s);
  auto second = j.send("b", "trylock c-holds 20000");
  EXPECT_THROW(j.wait_reply(second, 300ms), std::runtime_error);
  auto forced = steady::now();
  EXPECT_TRUE(lk.force_unlock());
  auto r2 = j.wait_reply(second, 5s);
  EXPECT_EQ(r2["result"], true) << r2.dump();
  EXPECT_LT(ns_after(forced, r2), 1'000'000'000);
  j.call_ok("b", "unlock c-holds");
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

// 5. Both watchdogs keep their holds alive while the other side waits.
TEST_P(redisson_interop, watchdogs_keep_holds_alive_against_the_other_side) {
  auto j = java(2s);
  relock::client client(settings(2s));
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
  EXPECT_TRUE(wait_until(
      [&] {
        return raw_.command({"KEYS", "redisson_unlock_latch:*"}).elements.empty();
      },
      3s));
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
