// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson (useSentinelServers) through one Sentinel set: the single-server
// scenarios 1-3 (tests/interop/lock_interop_test.cpp), a Redisson waiter and a relock waiter
// that both follow a failover, and semaphore and latch waiters of both sides that do too. Once per
// Redisson version; the cases share the set (support/sentinel_set.hpp), so this file runs as one
// CTest test.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stop_token>
#include <thread>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_driver.hpp"
#include "support/sentinel_set.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

long long ms_since(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t).count();
}

class sentinel_interop : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    redisson_driver::check_jar(GetParam());
    set().restore();
  }

  static sentinel_set& set() { return shared_sentinel_set(); }
  relock::config settings() const {
    relock::config c;
    c.url = set().url();
    // relock's warnings (a move, a refused master, a lost connection) beside a failure, timed
    // from the first: what relock saw of a failover is half of what went wrong.
    c.log = [](relock::log_level level, std::string_view text) {
      if (level < relock::log_level::warning) return;
      static const auto first = steady::now();
      std::cout << "[relock, " + std::to_string(ms_since(first)) + " ms] " + std::string(text) +
                       "\n";
    };
    return c;
  }
  redisson_driver java() const { return redisson_driver(GetParam(), set().url(), 30s); }
  raw_client master() const { return set().client(set().master_port()); }
};

// For a failure message: what each data node says it is, how many listen on `channels` there,
// and its subscribed clients (CLIENT LIST lines with sub or psub above 0: name, address, age).
std::string who_listens(sentinel_set& set, const std::vector<std::string>& channels) {
  std::string out;
  for (const std::uint16_t port : {set.master_port(), set.replica_port()}) {
    try {
      auto c = set.client(port);
      out += "\n  node " + std::to_string(port) + ": ROLE " +
             c.command({"ROLE"}).elements.at(0).str + ";";
      for (const auto& channel : channels) {
        out += " " + channel + " " +
               std::to_string(c.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer);
      }
      std::istringstream list(c.command({"CLIENT", "LIST"}).str);
      for (std::string line; std::getline(list, line);) {
        if (line.find(" sub=0 psub=0") == std::string::npos) out += "\n    " + line;
      }
    } catch (const std::exception& e) {
      out += "\n  node " + std::to_string(port) + ": " + e.what();
    }
  }
  return out;
}

// For a failure message: whether a waiter still waits, else what it returned or threw.
std::string how_it_ended(on_thread<bool>& waiter) {
  if (!waiter.done()) return "still waiting";
  try {
    return waiter.get().first ? "returned true" : "returned false";
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
}

}  // namespace

// 1. Two relock threads and two Redisson owners increment one counter under one lock.
TEST_P(sentinel_interop, mutual_exclusion_across_languages) {
  constexpr int rounds = 100;
  auto j = java();
  relock::client client(settings());
  auto a = j.send("a", "incloop shared counter " + std::to_string(rounds) + " 50");
  auto b = j.send("b", "incloop shared counter " + std::to_string(rounds) + " 50");
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      auto raw = master();
      auto lk = client.lock("shared");
      for (int i = 0; i < rounds; ++i) {
        std::unique_lock<relock::mutex> guard(lk);
        auto v = raw.command({"GET", "counter"});
        std::int64_t n = v.is_nil() ? 0 : std::stoll(v.str);
        std::this_thread::sleep_for(50us);
        raw.command({"SET", "counter", std::to_string(n + 1)});
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& id : {a, b}) ASSERT_TRUE(j.wait_reply(id, 120s).value("ok", false));
  EXPECT_EQ(master().command({"GET", "counter"}).str, std::to_string(4 * rounds));
  master().command({"DEL", "counter"});
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message.
TEST_P(sentinel_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("j-holds");
  ASSERT_EQ(j.call_ok("a", "lock j-holds 30000"), true);
  EXPECT_FALSE(lk.try_lock(300ms));
  auto waiting = try_on_thread(lk, 20s);
  std::this_thread::sleep_for(200ms);  // let it subscribe; a late one is woken by its retry
  const auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock j-holds"), true);
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  auto [got, at] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(at - released, 2s);  // the lease had 29 s left: it woke on the message
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock.
TEST_P(sentinel_interop, redisson_waits_on_a_relock_hold_and_wakes_on_its_unlock) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("c-holds");
  lk.lock(30s);
  auto id = j.send("a", "trylock c-holds 20000");
  EXPECT_THROW(j.wait_reply(id, 300ms), std::runtime_error);  // still waiting
  const auto released = steady::now();
  lk.unlock();
  auto r = j.wait_reply(id, 10s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 2'000'000'000);
  j.call_ok("a", "unlock c-holds");
}

// A relock holder, a Redisson waiter and a relock waiter, through SENTINEL FAILOVER: the
// holder's release on the new master wakes both waiters there.
TEST_P(sentinel_interop, a_redisson_waiter_and_a_relock_waiter_follow_a_failover) {
  auto j = java();
  relock::client holder_client(settings());
  relock::client waiter_client(settings());
  auto held = holder_client.lock("moving");
  held.lock();
  auto java_waits = j.send("a", "trylock moving 60000");
  auto relock_lock = waiter_client.lock("moving");
  auto relock_waits = try_on_thread(relock_lock, 60s);
  EXPECT_THROW(j.wait_reply(java_waits, 300ms), std::runtime_error);

  const auto failover = steady::now();
  const std::uint16_t new_master = set().failover();
  const std::string there = "127.0.0.1:" + std::to_string(new_master);
  ASSERT_TRUE(wait_until([&] { return holder_client.inspect("moving").node == there; }, 20s, 10ms));
  std::cout << "new master after " << ms_since(failover) << " ms; relock holder on it\n";
  // Give Redisson time to move too: it learns of the switch from its sentinel.
  ASSERT_TRUE(wait_until(
      [&] {
        return set()
                   .client(new_master)
                   .command({"PUBSUB", "NUMSUB", lock_channel("moving")})
                   .elements.at(1)
                   .integer >= 2;
      },
      30s, 50ms))
      << "the waiters did not both resubscribe on the new master";
  std::cout << "both waiters subscribed on the new master " << ms_since(failover)
            << " ms after the failover\n";
  const auto released = steady::now();
  held.unlock();
  // One of them gets it first; relock's waiter lets go at once, Redisson's when told.
  auto r = j.wait_reply(java_waits, 30s);
  EXPECT_EQ(r["result"], true) << r.dump();
  std::cout << "Redisson's waiter acquired " << ms_since(released) << " ms after the release\n";
  j.call_ok("a", "unlock moving");
  ASSERT_EQ(relock_waits.wait_for(30s), std::future_status::ready);
  auto [got, at] = relock_waits.get();
  EXPECT_TRUE(got);
  std::cout << "relock's waiter acquired "
            << std::chrono::duration_cast<std::chrono::milliseconds>(at - released).count()
            << " ms after the release\n";
}

// semaphore and latch waiters of both sides, through SENTINEL FAILOVER: each follows the master
// and resubscribes there, and relock's release of 2 permits and its last count down on the new
// master wake them all; then a Java release there wakes a relock waiter. (Redisson 4.7.0's
// semaphore waiter, like its lock waiter in the test above, takes 2-3 s after a failover to get
// a permit it was told of; 3.18.1's takes about 10 ms. See tests/interop/README.md.)
TEST_P(sentinel_interop, semaphore_and_latch_waiters_of_both_sides_follow_a_failover) {
  auto j = java();
  relock::client client(settings());
  // Names of this version's own: a failed run for one version leaves nothing in the next's way.
  const std::string sem_name = "moving-sem-" + redisson_driver::param_name(GetParam());
  const std::string latch_name = "moving-latch-" + redisson_driver::param_name(GetParam());
  auto sem = client.semaphore(sem_name);
  auto latch = client.count_down_latch(latch_name);
  ASSERT_TRUE(sem.try_set_permits(0));
  ASSERT_TRUE(latch.try_set_count(1));

  on_thread<bool> relock_permit(
      [&sem](std::stop_token stop) { return sem.try_acquire(1, 60s, stop); });
  on_thread<bool> relock_open([&latch](std::stop_token stop) { return latch.await(60s, stop); });
  auto java_permit = j.send("a", "stryacquire " + sem_name + " 1 60000");
  auto java_open = j.send("b", "lawait " + latch_name + " 60000");
  EXPECT_THROW(j.wait_reply(java_permit, 300ms), std::runtime_error);

  const auto failover = steady::now();
  const std::uint16_t new_master = set().failover();
  auto subscribed = [&](const std::string& channel) {
    return set().client(new_master).command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
  };
  ASSERT_TRUE(wait_until(
      [&] {
        return subscribed(semaphore_channel(sem_name)) >= 2 &&
               subscribed(latch_channel(latch_name)) >= 2;
      },
      30s, 50ms))
      << "the waiters did not all resubscribe on the new master " << new_master << ":"
      << who_listens(set(), {semaphore_channel(sem_name), latch_channel(latch_name)})
      << "\n  relock's permit waiter: " << how_it_ended(relock_permit)
      << "; relock's latch waiter: " << how_it_ended(relock_open);
  std::cout << "every waiter subscribed on the new master " << ms_since(failover)
            << " ms after the failover\n";
  EXPECT_FALSE(relock_permit.done());
  EXPECT_FALSE(relock_open.done());

  const auto released = steady::now();
  sem.release(2);
  latch.count_down();
  auto rp = j.wait_reply(java_permit, 10s);
  EXPECT_EQ(rp["result"], true) << rp.dump();
  auto ro = j.wait_reply(java_open, 10s);
  EXPECT_EQ(ro["result"], true) << ro.dump();
  ASSERT_TRUE(relock_permit.done(10s));
  ASSERT_TRUE(relock_open.done(10s));
  const auto [permit, permit_at] = relock_permit.get();
  const auto [open, open_at] = relock_open.get();
  EXPECT_TRUE(permit);
  EXPECT_TRUE(open);
  auto ms = [&](steady::time_point at) {
    return std::chrono::duration<double, std::milli>(at - released).count();
  };
  std::cout << "after relock's release and count down: Java's permit " << ms_to_end(released, rp)
            << " ms, Java's latch " << ms_to_end(released, ro) << " ms, relock's permit "
            << ms(permit_at) << " ms, relock's latch " << ms(open_at) << " ms\n";
  EXPECT_EQ(set().client(new_master).command({"GET", sem_name}).str, "0");
  EXPECT_EQ(set().client(new_master).command({"EXISTS", latch_name}).integer, 0);

  on_thread<bool> again([&sem](std::stop_token stop) { return sem.try_acquire(1, 20s, stop); });
  ASSERT_TRUE(wait_until([&] { return subscribed(semaphore_channel(sem_name)) >= 1; }, 10s, 20ms));
  auto given = j.call("a", "srelease " + sem_name + " 1");
  ASSERT_TRUE(given.value("ok", false)) << given.dump();
  ASSERT_TRUE(again.done(10s));
  auto [got, at] = again.get();
  EXPECT_TRUE(got);
  std::cout << "relock's waiter got Java's permit " << ms_since_start(given, at)
            << " ms after it\n";
  EXPECT_FALSE(sem.try_set_permits(5));  // a count exists, even at 0 (redisson#4678)
  set().client(new_master).command({"DEL", sem_name});
}

INSTANTIATE_TEST_SUITE_P(redisson, sentinel_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
