// SPDX-License-Identifier: Apache-2.0
// relock::multi_lock against the real Redisson's RedissonMultiLock (getMultiLock, the driver's
// "multi:m1,m2,m3" lock token) and its plain RLocks, once per Redisson version built by
// tests/interop/redisson/prepare. Neither multi-lock has data of its own: each member is an
// ordinary reentrant hold, so the two exclude each other member by member, and each member's
// release publishes on that member's channel, waking the other side's waiters there.
//
// How Redisson's multi-lock behaves (seen with MONITOR, 3.18.1 and 4.7.0 alike): it takes its
// members one at a time in the order given, waiting on one (subscribed to its channel) while
// keeping those before it; a wait that fails gives them all back. With an explicit lease it
// takes each member for twice its wait and then PEXPIREs every member to the lease.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include <relock/client.hpp>
#include <relock/multi_lock.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// Every hold in these tests has a 30 s lease (or watchdog): a waiter that gets the lock within
// this after the release was woken by its message, not by an expiry.
constexpr std::int64_t promptly_ns = 1'000'000'000;

// The driver's RedissonMultiLock over the same three names.
const std::string java_set = "multi:m1,m2,m3";

class multi_lock_interop : public redisson_fixture {
 protected:
  const std::vector<std::string> names{"m1", "m2", "m3"};

  relock::multi_lock relock_set(relock::client& client) {
    return relock::multi_lock(client.lock("m1"), client.lock("m2"), client.lock("m3"));
  }
  // Each member's hash holds `field` once and nobody else.
  void expect_every_member_held_only_by(const std::string& field) {
    for (const auto& name : names) EXPECT_EQ(hash_of(name), (fields{{field, "1"}})) << name;
  }
  void expect_every_member_free() {
    for (const auto& name : names) EXPECT_FALSE(exists(name)) << name;
  }
};

}  // namespace

// Scenario 1: whichever side holds the set, the other side's set is refused, at once and after
// a wait, and the refused side leaves no hold on any member.
TEST_P(multi_lock_interop, java_and_relock_multi_locks_exclude_each_other) {
  auto j = java();
  relock::client client(settings());
  auto all = relock_set(client);
  const auto ja = j.owner_field("a");
  const auto me = all.members().front().owner_field(relock::owner::current_thread());

  ASSERT_EQ(j.call_ok("a", "lock " + java_set + " 30000"), true);
  expect_every_member_held_only_by(ja);
  EXPECT_FALSE(all.try_lock());
  auto started = steady::now();
  EXPECT_FALSE(all.try_lock(300ms));
  const auto took = steady::now() - started;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
  expect_every_member_held_only_by(ja);
  ASSERT_EQ(j.call_ok("a", "unlock " + java_set), true);
  expect_every_member_free();

  all.lock(30s);
  expect_every_member_held_only_by(me);
  EXPECT_EQ(j.call_ok("b", "trylock " + java_set + " 0"), false);
  auto waited = j.call("b", "trylock " + java_set + " 300");
  EXPECT_EQ(waited["result"], false) << waited.dump();
  EXPECT_GE(took_ns(waited), 290'000'000);
  expect_every_member_held_only_by(me);
  all.unlock();
  expect_every_member_free();
}

// relock tries every member at once: a Java RLock on the middle member alone makes it give the
// others back before it fails.
TEST_P(multi_lock_interop, a_member_java_holds_fails_relocks_set_holding_nothing) {
  auto j = java();
  relock::client client(settings());
  auto all = relock_set(client);
  ASSERT_EQ(j.call_ok("a", "lock m2 30000"), true);
  const auto ja = j.owner_field("a");

  EXPECT_FALSE(all.try_lock());
  EXPECT_FALSE(exists("m1"));
  EXPECT_FALSE(exists("m3"));
  EXPECT_FALSE(all.try_lock(300ms));
  EXPECT_FALSE(exists("m1"));
  EXPECT_FALSE(exists("m3"));
  EXPECT_EQ(hash_of("m2"), (fields{{ja, "1"}}));
  j.call_ok("a", "unlock m2");
}

// Scenario 2: relock's set releases every member at once, and each member's release message wakes
// the Java waiter on that member.
TEST_P(multi_lock_interop, relocks_release_wakes_a_java_waiter_on_each_member) {
  auto j = java();
  relock::client client(settings());
  auto all = relock_set(client);
  const auto me = all.members().front().owner_field(relock::owner::current_thread());
  all.lock(30s);

  const std::vector<std::string> owners{"a", "b", "c"};  // owner k waits on names[k]
  std::vector<std::string> waits;
  for (std::size_t k = 0; k < names.size(); ++k) {
    waits.push_back(j.send(owners[k], "trylock " + names[k] + " 20000"));
  }
  for (const auto& name : names) {
    ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel(name)) >= 1; }, 5s)) << name;
  }
  expect_every_member_held_only_by(me);

  const auto released = steady::now();
  all.unlock();
  for (std::size_t k = 0; k < names.size(); ++k) {
    auto r = j.wait_reply(waits[k], 5s);
    EXPECT_EQ(r["result"], true) << r.dump();
    EXPECT_LT(ns_after(released, r), promptly_ns) << names[k];
    EXPECT_EQ(hash_of(names[k]), (fields{{j.owner_field(owners[k]), "1"}}));
    j.call_ok(owners[k], "unlock " + names[k]);
  }
  expect_every_member_free();
}

// Scenario 2, Java's set: it waits on its first member (subscribed to that member's channel,
// keeping nothing), and relock's release lets it take all three at once.
TEST_P(multi_lock_interop, a_java_multi_lock_waiting_on_relocks_gets_it_at_its_release) {
  auto j = java();
  relock::client client(settings());
  auto all = relock_set(client);
  const auto me = all.members().front().owner_field(relock::owner::current_thread());
  all.lock(30s);

  auto waiting = j.send("a", "trylock " + java_set + " 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("m1")) >= 1; }, 5s));
  expect_every_member_held_only_by(me);

  const auto released = steady::now();
  all.unlock();
  auto r = j.wait_reply(waiting, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), promptly_ns);
  expect_every_member_held_only_by(j.owner_field("a"));
  ASSERT_EQ(j.call_ok("a", "unlock " + java_set), true);
  expect_every_member_free();
}

// The reverse: relock's waiting set listens on the first member Java holds and wakes on the
// release of Java's set.
TEST_P(multi_lock_interop, relocks_set_waiting_on_a_java_multi_lock_gets_it_at_its_release) {
  auto j = java();
  relock::client client(settings());
  auto all = relock_set(client);
  ASSERT_EQ(j.call_ok("a", "lock " + java_set + " 30000"), true);

  const auto who = relock::owner::unique();
  auto waiting = all.async_try_lock(who, {.wait = 20s}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("m1")) >= 1; }, 5s));
  expect_every_member_held_only_by(j.owner_field("a"));

  const auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock " + java_set), true);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_LT(steady::now() - released, std::chrono::nanoseconds(promptly_ns));
  EXPECT_TRUE(waiting.get());
  expect_every_member_held_only_by(all.members().front().owner_field(who));
  all.async_unlock(who, asio::use_future).get();
  expect_every_member_free();
}

INSTANTIATE_TEST_SUITE_P(redisson, multi_lock_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
