// SPDX-License-Identifier: Apache-2.0
// The reentrant lock's data and queries, as Redisson would see them.
#include <gtest/gtest.h>

#include <mutex>
#include <regex>

#include "support/command_stats.hpp"
#include "support/lock_env.hpp"
#include "support/unlock_latches.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

TEST(lock, holds_look_exactly_like_redissons) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("orders");

  lk.lock();
  auto hash = raw.command({"HGETALL", "orders"});
  ASSERT_EQ(hash.elements.size(), 2u);
  EXPECT_EQ(hash.elements[0].str, my_field(client));
  EXPECT_EQ(hash.elements[1].str, "1");
  // The field is <uuid>:<decimal thread id>, the uuid in canonical lowercase form.
  EXPECT_TRUE(std::regex_match(
      hash.elements[0].str,
      std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+")))
      << hash.elements[0].str;
  auto ttl = raw.command({"PTTL", "orders"}).integer;
  EXPECT_GT(ttl, 25'000);  // the watchdog lease, 30 s
  EXPECT_LE(ttl, 30'000);
  lk.unlock();
  EXPECT_EQ(raw.command({"EXISTS", "orders"}).integer, 0);
}

TEST(lock, reentrancy_counts_and_resets_the_lease) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("re");

  lk.lock(10s);
  lk.lock(10s);
  lk.lock(10s);
  EXPECT_EQ(lk.hold_count(), 3);
  EXPECT_EQ(raw.command({"HGET", "re", my_field(client)}).str, "3");
  lk.unlock();
  EXPECT_EQ(lk.hold_count(), 2);
  EXPECT_TRUE(lk.is_locked());
  // A partial release restores the hold's lease.
  EXPECT_GT(raw.command({"PTTL", "re"}).integer, 9'000);
  lk.unlock();
  lk.unlock();
  EXPECT_FALSE(lk.is_locked());
  EXPECT_EQ(lk.hold_count(), 0);
}

TEST(lock, queries) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("q");
  EXPECT_FALSE(lk.is_locked());
  EXPECT_FALSE(lk.remaining_lease());
  lk.lock(5s);
  EXPECT_TRUE(lk.is_locked());
  EXPECT_TRUE(lk.is_held_by_current_thread());
  EXPECT_TRUE(lk.is_held_by(relock::owner::current_thread()));
  EXPECT_FALSE(lk.is_held_by(relock::owner::unique()));
  EXPECT_FALSE(on_other_thread([&] { return lk.is_held_by_current_thread(); }));
  auto left = lk.remaining_lease();
  ASSERT_TRUE(left);
  EXPECT_GT(*left, 4s);
  EXPECT_LE(*left, 5s);
  lk.unlock();
}

TEST(lock, other_owners_are_excluded) {
  redis_server server;
  relock::client client(settings_for(server));
  relock::client other(settings_for(server));
  auto lk = client.lock("x");
  lk.lock();
  EXPECT_FALSE(on_other_thread([&] { return lk.try_lock(); }));  // same client, other thread
  EXPECT_FALSE(other.lock("x").try_lock());                      // other client, same thread id
  lk.unlock();
  EXPECT_TRUE(other.lock("x").try_lock());
  other.lock("x").unlock();
}

TEST(lock, works_with_unique_lock_scoped_lock_and_try_lock_for) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto a = client.lock("a");
  auto b = client.lock("b");
  {
    std::unique_lock<relock::mutex> guard(a);
    EXPECT_TRUE(guard.owns_lock());
    EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 1);
  }
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 0);
  {
    std::scoped_lock both(a, b);
    EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 1);
    EXPECT_EQ(raw.command({"EXISTS", "b"}).integer, 1);
  }
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer + raw.command({"EXISTS", "b"}).integer, 0);
  {
    std::unique_lock<relock::mutex> guard(a, 200ms);  // try_lock_for
    EXPECT_TRUE(guard.owns_lock());
    EXPECT_FALSE(on_other_thread([&] {
      std::unique_lock<relock::mutex> second(a, std::chrono::steady_clock::now() + 100ms);
      return second.owns_lock();
    }));
  }
  EXPECT_FALSE(a.is_locked());
}

TEST(lock, non_reentrant_variant_refuses_a_second_acquire) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.non_reentrant_lock("once");
  lk.lock();
  try {
    lk.lock();
    FAIL() << "acquired twice";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::non_reentrant);
    EXPECT_NE(std::string(e.what()).find("NON_REENTRANT_REACQUIRE"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lk.hold_count(), 1);
  lk.unlock();
  EXPECT_FALSE(lk.is_locked());
}

TEST(lock, name_mapper_prefixes_every_key_and_channel) {
  redis_server server;
  auto c = settings_for(server);
  c.name_mapper = [](std::string_view name) { return "app:" + std::string(name); };
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("job");
  lk.lock();
  EXPECT_EQ(lk.key(), "app:job");
  EXPECT_EQ(raw.command({"EXISTS", "app:job"}).integer, 1);
  lk.unlock();
}

// One pair at a time, the releases' latches still leave together: they wait up to
// unlock_latch_sweep_delay (here 10 s, so the count is exact) or for a full DEL of 128,
// and a closing client sends the rest (data-layout §1.8).
TEST(lock, unlock_latches_of_pairs_one_at_a_time_leave_many_per_del) {
  redis_server server;
  auto raw = raw_client::to(server);
  auto latches = [&] { return unlock_latches(raw); };
  constexpr int pairs = 200;
  {
    auto c = settings_for(server);
    c.unlock_latch_sweep_delay = 10s;
    relock::client client(c);
    auto lk = client.lock("one-at-a-time");
    raw.command({"CONFIG", "RESETSTAT"});
    for (int i = 0; i < pairs; ++i) {
      lk.lock();
      lk.unlock();
    }
    // The first 128 left in one DEL; the other 72 wait for company.
    EXPECT_TRUE(wait_until([&] { return latches() == pairs - 128; }, 5s)) << latches();
  }
  // The client's shutdown sent them: none is left to its 20 s TTL.
  EXPECT_TRUE(wait_until([&] { return latches() == 0; }, 5s)) << latches();
  // Two DELs of latches; the other DELs are the releases' own, one per pair.
  EXPECT_EQ(calls_of(raw, "del") - pairs, 2);
}
