// SPDX-License-Identifier: Apache-2.0
// Many threads on one lock: exact counts, no overlap. Also run under TSan by scripts/test.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <relock/client.hpp>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"

using namespace std::chrono_literals;
using relock::test::redis_server;

TEST(lock_contention, eight_threads_times_a_thousand_increments_are_exact) {
  redis_server server;
  relock::config c;
  c.url = server.url();
  relock::client client(c);
  auto lk = client.lock("counter-lock");
  constexpr int threads = 8, rounds = 1000;
  std::int64_t counter = 0;  // plain: only the distributed lock protects it
  std::atomic<int> inside{0}, overlaps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = 0; i < rounds; ++i) {
        std::unique_lock<relock::mutex> guard(lk);
        if (inside.fetch_add(1) != 0) ++overlaps;
        ++counter;
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(counter, threads * rounds);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_FALSE(lk.is_locked());
}

TEST(lock_contention, two_clients_share_a_counter_in_redis) {
  redis_server server;
  relock::config c;
  c.url = server.url();
  relock::client first(c), second(c);
  constexpr int threads_per_client = 3, rounds = 300;
  std::vector<std::thread> workers;
  for (relock::client* cl : {&first, &second}) {
    for (int t = 0; t < threads_per_client; ++t) {
      workers.emplace_back([&server, cl] {
        auto raw = relock::test::raw_client::to(server);
        auto lk = cl->lock("shared-counter-lock");
        for (int i = 0; i < rounds; ++i) {
          std::unique_lock<relock::mutex> guard(lk);
          // read, then write: only the lock makes this safe
          auto v = raw.command({"GET", "shared-counter"});
          auto n = v.is_nil() ? 0 : std::stoll(v.str);
          raw.command({"SET", "shared-counter", std::to_string(n + 1)});
        }
      });
    }
  }
  for (auto& w : workers) w.join();
  auto raw = relock::test::raw_client::to(server);
  EXPECT_EQ(raw.command({"GET", "shared-counter"}).str,
            std::to_string(2 * threads_per_client * rounds));
}
