// SPDX-License-Identifier: Apache-2.0
// Readers really share and writers really exclude: every thread records its hold intervals on
// the steady clock, then the intervals are checked against each other. Also run under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "support/redis_server.hpp"

using namespace std::chrono_literals;
using relock::test::redis_server;
using steady = std::chrono::steady_clock;

namespace {

struct interval {
  steady::time_point from, to;
  bool write;
};

bool overlap(const interval& a, const interval& b) { return a.from < b.to && b.from < a.to; }

}  // namespace

TEST(rwlock_intervals, readers_overlap_and_no_writer_overlaps_anyone) {
  redis_server server;
  relock::config c;
  c.url = server.url();
  relock::client first(c), second(c);  // two clients, as two processes would be
  std::mutex m;
  std::vector<interval> log;
  std::vector<std::thread> workers;
  const auto until = steady::now() + 2s;
  auto worker = [&](relock::client* cl, bool writer) {
    auto rw = cl->read_write_lock("intervals");
    std::vector<interval> mine;
    while (steady::now() < until) {
      if (writer) {
        std::unique_lock guard(rw);
        const auto from = steady::now();
        std::this_thread::sleep_for(2ms);  // the write itself
        mine.push_back({from, steady::now(), true});
      } else {
        std::shared_lock guard(rw);
        const auto from = steady::now();
        std::this_thread::sleep_for(5ms);  // the read itself
        mine.push_back({from, steady::now(), false});
      }
      std::this_thread::sleep_for(1ms);  // between holds, so others get their turn
    }
    std::lock_guard g(m);
    log.insert(log.end(), mine.begin(), mine.end());
  };
  for (int i = 0; i < 4; ++i) workers.emplace_back(worker, i % 2 ? &first : &second, false);
  for (int i = 0; i < 2; ++i) workers.emplace_back(worker, i % 2 ? &first : &second, true);
  for (auto& w : workers) w.join();

  std::size_t writes = 0, shared_reads = 0;
  for (std::size_t i = 0; i < log.size(); ++i) {
    writes += log[i].write;
    for (std::size_t j = i + 1; j < log.size(); ++j) {
      if (!overlap(log[i], log[j])) continue;
      ASSERT_FALSE(log[i].write || log[j].write) << "a write overlapped another hold";
      ++shared_reads;
    }
  }
  EXPECT_GT(writes, 0u) << "the writers never got in";
  EXPECT_GT(shared_reads, 0u) << "no two reads were ever held at once";
}
