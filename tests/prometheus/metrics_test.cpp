// SPDX-License-Identifier: Apache-2.0
// make_prometheus_observer beside a real server, read back by scraping a real exposer: every
// figure checked against what the test did, for several kinds, a wait that runs out, a waiter
// seen while it waits, and a hold lost under the watchdog.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "metrics_env.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::count_of;
using relock::test::sample;
using relock::test::sum_of;

namespace {

class prometheus_metrics : public relock::test::metrics_env {};

// try_lock(wait) on a thread of its own (another owner), which unlocks what it got. Its result
// is false when the wait ran out or the call threw: no exception crosses threads.
std::future<bool> try_elsewhere(relock::mutex& m, std::chrono::milliseconds wait) {
  return std::async(std::launch::async, [&m, wait] {
    try {
      if (!m.try_lock(wait)) return false;
      m.unlock();
      return true;
    } catch (...) {
      return false;
    }
  });
}

}  // namespace

TEST_F(prometheus_metrics, acquires_releases_and_waits_are_counted_by_kind_and_outcome) {
  relock::client client(settings());
  auto plain = client.lock("plain");
  plain.lock();
  plain.unlock();
  auto fair = client.fair_lock("fair");
  fair.lock();
  fair.unlock();
  auto permits = client.semaphore("permits");
  ASSERT_TRUE(permits.try_set_permits(2));
  permits.acquire();
  permits.release();

  // A wait that runs out, on another thread (another owner).
  auto contended = client.lock("contended");
  contended.lock();
  EXPECT_FALSE(try_elsewhere(contended, 100ms).get());

  // A waiter, seen while it waits; it gets the lock once this thread lets go.
  auto waiting = try_elsewhere(contended, 10s);
  std::vector<sample> m;
  ASSERT_TRUE(scrape_until(m, [](const auto& s) {
    return sum_of(s, "relock_waiters", {{"kind", "lock"}}) == 1;
  }));
  EXPECT_EQ(sum_of(m, "relock_holds", {{"kind", "lock"}}), 1);
  contended.unlock();
  EXPECT_TRUE(waiting.get());

  ASSERT_TRUE(scrape_until(m, [](const auto& s) {
    return sum_of(s, "relock_releases_total") == 5 && sum_of(s, "relock_waiters") == 0;
  }));
  // By kind and outcome: plain, contended twice (here and on the waiter's thread).
  EXPECT_EQ(sum_of(m, "relock_acquisitions_total", {{"kind", "lock"}, {"outcome", "acquired"}}), 3);
  EXPECT_EQ(sum_of(m, "relock_acquisitions_total", {{"kind", "lock"}, {"outcome", "not_acquired"}}),
            1);
  EXPECT_EQ(sum_of(m, "relock_acquisitions_total", {{"kind", "lock"}, {"outcome", "failed"}}), 0);
  EXPECT_EQ(
      sum_of(m, "relock_acquisitions_total", {{"kind", "fair lock"}, {"outcome", "acquired"}}), 1);
  EXPECT_EQ(
      sum_of(m, "relock_acquisitions_total", {{"kind", "semaphore"}, {"outcome", "acquired"}}), 1);
  // The wait that ran out, in the histogram: one, of at least its 100 ms.
  const std::map<std::string, std::string> ran_out{{"kind", "lock"}, {"outcome", "not_acquired"}};
  EXPECT_EQ(sum_of(m, "relock_acquire_wait_seconds_count", ran_out), 1);
  EXPECT_GE(sum_of(m, "relock_acquire_wait_seconds_sum", ran_out), 0.1);
  EXPECT_EQ(sum_of(m, "relock_acquire_wait_seconds_count"), 6);
  // Hold times: the locks' three and the fair lock's one; a semaphore's permits have none.
  EXPECT_EQ(sum_of(m, "relock_hold_seconds_count", {{"kind", "lock"}}), 3);
  EXPECT_EQ(sum_of(m, "relock_hold_seconds_count", {{"kind", "fair lock"}}), 1);
  EXPECT_EQ(count_of(m, "relock_hold_seconds_count", {{"kind", "semaphore"}}), 0u);
  EXPECT_GT(sum_of(m, "relock_hold_seconds_sum"), 0);
  EXPECT_EQ(sum_of(m, "relock_releases_total", {{"kind", "lock"}, {"outcome", "ok"}}), 3);
  EXPECT_EQ(sum_of(m, "relock_releases_total", {{"kind", "fair lock"}, {"outcome", "ok"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_releases_total", {{"kind", "semaphore"}, {"outcome", "ok"}}), 1);
  // Nothing held, nobody waiting; with no label function, no name_group label anywhere.
  EXPECT_EQ(sum_of(m, "relock_holds"), 0);
  EXPECT_EQ(count_of(m, "relock_holds"), 3u);  // lock, fair lock, semaphore
  EXPECT_EQ(sum_of(m, "relock_waiters"), 0);
  for (const auto& s : m) EXPECT_EQ(s.labels.count("name_group"), 0u) << s.name;
  // Series that exist before their first event.
  EXPECT_EQ(count_of(m, "relock_losses_total", {{"reason", "lock_lost"}}), 1u);
  EXPECT_EQ(sum_of(m, "relock_losses_total"), 0);
  EXPECT_EQ(count_of(m, "relock_reconnects_total"), 1u);
}

TEST_F(prometheus_metrics, a_lost_hold_is_counted_once_and_leaves_the_holds_gauge) {
  auto s = settings();
  s.watchdog_lease = 600ms;  // renewals every 200 ms: the loss is found within one
  relock::client client(s);
  auto kept = client.lock("kept");
  kept.lock();
  auto doomed = client.lock("doomed");
  doomed.lock();
  std::vector<sample> m;
  ASSERT_TRUE(scrape_until(m, [](const auto& s) {
    return sum_of(s, "relock_holds", {{"kind", "lock"}}) == 2 &&
           sum_of(s, "relock_renewals_total", {{"outcome", "ok"}}) >= 2;
  }));

  raw_.command({"DEL", "doomed"});
  ASSERT_TRUE(scrape_until(m, [](const auto& s) { return sum_of(s, "relock_losses_total") >= 1; }));
  EXPECT_EQ(sum_of(m, "relock_losses_total", {{"reason", "lock_lost"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_losses_total", {{"reason", "renewal_failed"}}), 0);
  EXPECT_EQ(sum_of(m, "relock_holds", {{"kind", "lock"}}), 1);
  EXPECT_GE(sum_of(m, "relock_renewal_latency_seconds_count"), 1);

  // The late unlock of the lost hold: an error release, and no second decrement of the gauge.
  std::error_code ec;
  doomed.unlock(ec);
  EXPECT_EQ(ec, errc::lock_lost);
  ASSERT_TRUE(scrape_until(m, [](const auto& s) {
    return sum_of(s, "relock_releases_total", {{"outcome", "error"}}) == 1;
  }));
  EXPECT_EQ(sum_of(m, "relock_holds", {{"kind", "lock"}}), 1);

  kept.unlock();
  ASSERT_TRUE(scrape_until(m, [](const auto& s) { return sum_of(s, "relock_holds") == 0; }));
  EXPECT_EQ(sum_of(m, "relock_releases_total", {{"kind", "lock"}, {"outcome", "ok"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_losses_total"), 1);
}
