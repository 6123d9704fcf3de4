// SPDX-License-Identifier: Apache-2.0
// Scenarios 1-3 of issue #9, written once for every place relock and Redisson meet: one server
// (lock_interop_test.cpp), one server over TLS (tls_interop_test.cpp), the shared cluster
// (cluster_interop_test.cpp) and a cluster over TLS (tls_cluster_interop_test.cpp). The test makes
// both sides for its place (a relock client and the Redisson driver) and describes the place in a
// `setting`; a scenario contends with them and checks what each side sees:
//   1. mutual_exclusion: two relock threads and two Redisson owners per lock increment a counter
//      under it; exact counts, no overlapping holds.
//   2. relock_waits_on_a_redisson_hold: relock gives up on time, then wakes on Redisson's unlock
//      message.
//   3. redisson_waits_on_a_relock_hold: Redisson wakes on relock's unlock and on its
//      force_unlock.
// Each returns early on a fatal failure: call them in ASSERT_NO_FATAL_FAILURE.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_driver.hpp"
#include "support/raw_client.hpp"
#include "support/wait.hpp"

namespace relock::test::contention {

// What differs between the places the scenarios run in.
struct setting {
  // A new raw connection to the server that holds `key` (in a cluster, the key's master).
  std::function<raw_client(const std::string& key)> raw_for;
  // Subscribers that would hear a release published on `channel`, in the pub/sub mode both
  // sides use.
  std::function<long long(const std::string& channel)> subscribers;
  // Checks what the place promises of both sides' connections (that they use TLS ports, say),
  // for the server of lock `name`: in scenario 1 before the contention starts, in 2 and 3 while
  // one side waits on the other. Checks nothing by default.
  std::function<void(const std::string& name)> check_connections = [](const std::string&) {};
  // Where `name` lives, for the timings printed ("master 127.0.0.1:PORT, lock NAME" in a
  // cluster); the name by default.
  std::function<std::string(const std::string& name)> place = [](const std::string& name) {
    return name;
  };
};

using interval = std::pair<std::int64_t, std::int64_t>;  // CLOCK_MONOTONIC ns: acquired, released

// The counter that scenario 1 increments under lock `name`: in the lock's slot, so on its master.
inline std::string counter_of(const std::string& name) { return "{" + name + "}:counter"; }

// 1. On every lock of `names` at once, two relock threads and two Redisson owners each
// increment the lock's counter `rounds` times under it (read, pause, write: only the lock
// protects it): exact counts, and no two holds of one lock overlap.
inline void mutual_exclusion(redisson_driver& java, relock::client& client,
                             const std::vector<std::string>& names, const setting& where,
                             int rounds = 500) {
  using namespace std::chrono_literals;
  for (const auto& name : names) where.check_connections(name);
  // A counter a failed run left behind would spoil the count.
  for (const auto& name : names) where.raw_for(counter_of(name)).command({"DEL", counter_of(name)});

  std::vector<std::vector<std::string>> java_runs(names.size());
  for (std::size_t n = 0; n < names.size(); ++n) {
    for (char owner : {static_cast<char>('a' + 2 * n), static_cast<char>('b' + 2 * n)}) {
      java_runs[n].push_back(java.send(std::string(1, owner), "incloop " + names[n] + " " +
                                                                  counter_of(names[n]) + " " +
                                                                  std::to_string(rounds) + " 50"));
    }
  }
  std::vector<std::array<std::vector<interval>, 2>> intervals(names.size());  // [name][thread]
  std::vector<std::thread> threads;
  for (std::size_t n = 0; n < names.size(); ++n) {
    for (std::size_t t = 0; t < 2; ++t) {
      // Connected here: the setting's cluster is driven from the test's thread only.
      threads.emplace_back([&, n, t, raw = where.raw_for(counter_of(names[n]))]() mutable {
        const std::string counter = counter_of(names[n]);
        auto lk = client.lock(names[n]);
        for (int i = 0; i < rounds; ++i) {
          std::unique_lock<relock::mutex> guard(lk);
          auto acquired = now_ns();
          auto v = raw.command({"GET", counter});
          std::int64_t count = v.is_nil() ? 0 : std::stoll(v.str);
          std::this_thread::sleep_for(50us);
          raw.command({"SET", counter, std::to_string(count + 1)});
          intervals[n][t].push_back({acquired, now_ns()});
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  for (std::size_t n = 0; n < names.size(); ++n) {
    std::vector<interval> all = intervals[n][0];
    all.insert(all.end(), intervals[n][1].begin(), intervals[n][1].end());
    for (const auto& id : java_runs[n]) {
      auto r = java.wait_reply(id, 120s);
      ASSERT_TRUE(r.value("ok", false)) << r.dump();
      for (const auto& iv : r["result"]["intervals"]) {
        all.push_back({iv[0].get<std::int64_t>(), iv[1].get<std::int64_t>()});
      }
    }
    auto raw = where.raw_for(counter_of(names[n]));
    EXPECT_EQ(raw.command({"GET", counter_of(names[n])}).str, std::to_string(4 * rounds))
        << names[n];
    ASSERT_EQ(all.size(), 4u * static_cast<std::size_t>(rounds)) << names[n];
    std::sort(all.begin(), all.end());
    int overlaps = 0;
    for (std::size_t i = 1; i < all.size(); ++i) overlaps += all[i].first < all[i - 1].second;
    EXPECT_EQ(overlaps, 0) << names[n];
    raw.command({"DEL", counter_of(names[n])});  // a cluster may be shared with other tests
  }
}

// 2. Redisson (owner "a") holds `name`: relock's try_lock gives up on time, then a waiting one
// wakes on Redisson's unlock message, long before the hold's 30 s lease would have run out.
inline void relock_waits_on_a_redisson_hold(redisson_driver& java, relock::client& client,
                                            const std::string& name, const setting& where) {
  using namespace std::chrono_literals;
  using steady = std::chrono::steady_clock;
  auto lk = client.lock(name);
  ASSERT_EQ(java.call_ok("a", "lock " + name + " 30000"), true);

  auto started = steady::now();
  EXPECT_FALSE(lk.try_lock(500ms));
  auto took = steady::now() - started;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 2s);

  auto waiting = try_on_thread(lk, 20s);
  ASSERT_TRUE(wait_until([&] { return where.subscribers(lock_channel(name)) >= 1; }, 5s));
  where.check_connections(name);
  auto released = steady::now();
  ASSERT_EQ(java.call_ok("a", "unlock " + name), true);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto [got, at] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(at - released, 1s);  // the lease had 29 s left: it woke on the message
  std::printf("%s: relock woke %lld us after Redisson's unlock\n", where.place(name).c_str(),
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::microseconds>(at - released).count()));
}

// 3. relock holds `name`: Redisson's waiting tryLock (owner "a", then "b") wakes on relock's
// unlock, and on its force_unlock.
inline void redisson_waits_on_a_relock_hold(redisson_driver& java, relock::client& client,
                                            const std::string& name, const setting& where) {
  using namespace std::chrono_literals;
  using steady = std::chrono::steady_clock;
  auto lk = client.lock(name);

  lk.lock(30s);
  auto id = java.send("a", "trylock " + name + " 20000");
  // Redisson subscribed the way relock publishes here: else only the lease would end its wait.
  ASSERT_TRUE(wait_until([&] { return where.subscribers(lock_channel(name)) >= 1; }, 5s));
  EXPECT_THROW(java.wait_reply(id, 300ms), std::runtime_error);  // still waiting
  where.check_connections(name);
  auto released = steady::now();
  lk.unlock();
  auto r = java.wait_reply(id, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 1'000'000'000);
  ASSERT_EQ(java.call_ok("a", "unlock " + name), true);

  lk.lock(30s);
  auto second = java.send("b", "trylock " + name + " 20000");
  ASSERT_TRUE(wait_until([&] { return where.subscribers(lock_channel(name)) >= 1; }, 5s));
  EXPECT_THROW(java.wait_reply(second, 300ms), std::runtime_error);
  auto forced = steady::now();
  EXPECT_TRUE(lk.force_unlock());
  auto r2 = java.wait_reply(second, 5s);
  EXPECT_EQ(r2["result"], true) << r2.dump();
  EXPECT_LT(ns_after(forced, r2), 1'000'000'000);
  ASSERT_EQ(java.call_ok("b", "unlock " + name), true);
  std::printf("%s: Redisson woke %lld us after relock's unlock, %lld us after its force_unlock\n",
              where.place(name).c_str(), static_cast<long long>(ns_after(released, r) / 1000),
              static_cast<long long>(ns_after(forced, r2) / 1000));
}

}  // namespace relock::test::contention
