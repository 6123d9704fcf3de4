// SPDX-License-Identifier: Apache-2.0
// relock's spin lock (client::spin_lock) against the real Redisson's RSpinLock (getSpinLock) and
// RLock (getLock), once per Redisson version built by tests/interop/redisson/prepare (issue #17;
// RSpinLock exists in 3.18.1 and 4.x alike). A spin lock has the reentrant lock's data and no
// pub/sub: its releases publish nothing and its waiters poll with a growing delay
// (config::spin_backoff; Redisson's default is the same, 1 ms doubling to 128 ms). So a spin
// waiter gets a freed lock within about one backoff step, never later than the holder's TTL,
// and without ever subscribing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <sstream>
#include <string>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// A waiter that has been refused this many times has slept through the backoff's every step up
// to its maximum (1, 2, 4 ... 128 ms: 8 steps), so what follows a release is a full-size step.
constexpr std::int64_t tries_to_reach_the_longest_step = 10;

class spin_interop : public redisson_fixture {
 protected:
  // Subscribe commands of every kind run so far, by anyone.
  std::int64_t subscribe_calls() {
    return calls_of("subscribe") + calls_of("psubscribe") + calls_of("ssubscribe");
  }
  // The channels `client`'s connections listen on right now (CLIENT LIST's sub + psub + ssub
  // of every connection it named "relock:<client id>:...").
  std::int64_t relock_subscriptions(const relock::client& client) {
    std::int64_t total = 0;
    int connections = 0;
    std::istringstream in(raw_.command({"CLIENT", "LIST"}).str);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(" name=relock:" + client.id() + ":") == std::string::npos) continue;
      ++connections;
      std::istringstream words(line);
      std::string word;
      while (words >> word) {
        for (const char* counter : {"sub=", "psub=", "ssub="}) {
          if (word.rfind(counter, 0) == 0) total += std::stoll(word.substr(std::strlen(counter)));
        }
      }
    }
    EXPECT_GT(connections, 0) << "no connection named relock:" << client.id();
    return total;
  }
  // A Java hold of `java_lock` ("spin:NAME" or "lock:NAME") keeps relock's spin lock on NAME out,
  // and relock's spin hold (re-entered) keeps that Java lock out, at once and after waiting.
  void exclude_both_ways(const std::string& java_lock, const std::string& name) {
    auto j = java();
    relock::client client(settings());
    auto spin = client.spin_lock(name);
    const auto ja = j.owner_field("a");
    const auto me = spin.owner_field(relock::owner::current_thread());

    ASSERT_EQ(j.call_ok("a", "lock " + java_lock), true);
    EXPECT_EQ(hash_of(name), (fields{{ja, "1"}}));
    EXPECT_FALSE(spin.try_lock());
    auto started = steady::now();
    EXPECT_FALSE(spin.try_lock(300ms));
    EXPECT_GE(steady::now() - started, 300ms);
    EXPECT_TRUE(spin.is_locked());
    EXPECT_TRUE(spin.is_held_by(ja));
    std::error_code ec;
    spin.unlock(ec);
    EXPECT_EQ(ec, relock::errc::not_owner);
    EXPECT_EQ(hash_of(name), (fields{{ja, "1"}}));
    ASSERT_EQ(j.call_ok("a", "unlock " + java_lock), true);
    EXPECT_FALSE(exists(name));

    spin.lock();
    spin.lock();
    EXPECT_EQ(hash_of(name), (fields{{me, "2"}}));
    EXPECT_EQ(j.call_ok("b", "trylock " + java_lock + " 0"), false);
    auto waited = j.call("b", "trylock " + java_lock + " 300");
    EXPECT_EQ(waited["result"], false) << waited.dump();
    EXPECT_GE(took_ns(waited), 290'000'000);
    EXPECT_EQ(j.call_ok("b", "islocked " + java_lock), true);
    EXPECT_EQ(j.call_ok("b", "isheld " + java_lock), false);
    auto denied = j.call("b", "unlock " + java_lock);
    EXPECT_FALSE(denied.value("ok", true)) << denied.dump();
    spin.unlock();
    EXPECT_EQ(j.call_ok("b", "trylock " + java_lock + " 0"), false);  // still held once
    spin.unlock();
    EXPECT_FALSE(exists(name));
    EXPECT_EQ(j.call_ok("b", "trylock " + java_lock + " 0"), true);
    EXPECT_EQ(hash_of(name), (fields{{j.owner_field("b"), "1"}}));
    ASSERT_EQ(j.call_ok("b", "unlock " + java_lock), true);
  }

  // A relock spin waiter behind a Java hold of `java_lock` (30 s left) polls, never subscribes,
  // and has the lock within a backoff step of the Java unlock.
  void spin_waiter_gets_the_lock_after_a_java_unlock(const std::string& java_lock,
                                                     const std::string& name) {
    auto j = java();
    relock::client client(settings());
    auto spin = client.spin_lock(name);
    const auto max_step = client.settings().spin_backoff.max;
    ASSERT_EQ(j.call_ok("a", "lock " + java_lock), true);

    const auto subscribes_before = subscribe_calls();
    const auto scripts_before = script_calls();
    auto waiter = try_on_thread(spin, 20s);
    // It tries again and again (each try one script call), up to its longest step.
    ASSERT_TRUE(wait_until(
        [&] { return script_calls() - scripts_before >= tries_to_reach_the_longest_step; }, 10s));
    EXPECT_EQ(waiter.wait_for(0ms), std::future_status::timeout);
    // ... and listens on nothing meanwhile.
    EXPECT_EQ(subscribers(lock_channel(name)), 0);
    EXPECT_EQ(relock_subscriptions(client), 0);
    EXPECT_EQ(subscribe_calls(), subscribes_before);

    auto released = steady::now();
    ASSERT_EQ(j.call_ok("a", "unlock " + java_lock), true);
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
    auto [got, at] = waiter.get();
    EXPECT_TRUE(got);
    // One step (max, plus up to half of it as jitter), after the unlock's round trip; far from
    // the 30 s the Java hold had left.
    EXPECT_LT(at - released, max_step * 3 / 2 + 500ms)
        << std::chrono::duration_cast<std::chrono::milliseconds>(at - released).count() << " ms";
    EXPECT_EQ(subscribe_calls(), subscribes_before);
    EXPECT_EQ(subscribers(lock_channel(name)), 0);
    EXPECT_FALSE(exists(name));
  }
};

}  // namespace

TEST_P(spin_interop, redisson_spin_lock_and_relock_spin_lock_exclude_each_other_both_ways) {
  exclude_both_ways("spin:sp", "sp");
}

TEST_P(spin_interop, redisson_rlock_and_relock_spin_lock_exclude_each_other_both_ways) {
  exclude_both_ways("lock:sp", "sp");
}

TEST_P(spin_interop, a_relock_spin_waiter_polls_without_subscribing_and_gets_a_java_spin_release) {
  spin_waiter_gets_the_lock_after_a_java_unlock("spin:sw", "sw");
}

// Redisson's RLock release publishes on the lock's channel; the spin waiter does not listen, and
// finds the lock free all the same at its next try.
TEST_P(spin_interop, a_relock_spin_waiter_polls_without_subscribing_and_gets_a_java_rlock_release) {
  spin_waiter_gets_the_lock_after_a_java_unlock("lock:sw", "sw");
}

// The reverse: Redisson's spin waiter, behind relock's spin hold (30 s left), polls too and has
// the lock soon after relock's release, which publishes nothing.
TEST_P(spin_interop, a_java_spin_waiter_gets_the_lock_soon_after_a_relock_spin_release) {
  auto j = java();
  relock::client client(settings());
  auto spin = client.spin_lock("js");
  spin.lock();
  const auto publishes_before = calls_of("publish");
  const auto scripts_before = script_calls();
  auto waiting = j.send("a", "trylock spin:js 20000");
  ASSERT_TRUE(wait_until(
      [&] { return script_calls() - scripts_before >= tries_to_reach_the_longest_step; }, 10s));
  EXPECT_EQ(subscribers(lock_channel("js")), 0);
  auto released = steady::now();
  spin.unlock();
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, waiting, released));
  EXPECT_EQ(calls_of("publish"), publishes_before);  // neither side published
  EXPECT_EQ(hash_of("js"), (fields{{j.owner_field("a"), "1"}}));
  ASSERT_EQ(j.call_ok("a", "unlock spin:js"), true);
  EXPECT_FALSE(exists("js"));
}

INSTANTIATE_TEST_SUITE_P(redisson, spin_interop, ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
