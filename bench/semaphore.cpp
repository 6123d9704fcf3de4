// SPDX-License-Identifier: Apache-2.0
// semaphore: T threads (8) on one semaphore holding P permits (P = T/2: 4), the Redisson
// RSemaphore's data. Each thread loops acquire(1) / release(1) for the window, holding nothing
// in between, so about half the threads wait for a permit at any time and most permits change
// hands through a release's message (redisson_sc:{name}) waking a waiter. pairs_per_s counts the
// pairs begun inside the window, per second of it (as n-locks); wait is the acquire call's
// latency (whether it found a permit at once or waited for one), pair the acquire + release.
//
// Checks: never more than P holders at once (`overlaps`: an acquire that made P + 1), the
// permits all back after the window (`permits_lost`: P - available_permits(); 0 expected), and
// any error or cancelled acquire. An acquire still waiting 3 s after the window is cancelled
// through its stop_token (a lost wake-up would show up there, and in wait_max_us).
//
// Before the window the same loop runs 200 pairs a thread on a name of its own
// (bench:semaphore:warmup), so scripts are loaded and the subscription connection made.
#include <algorithm>
#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

// Makes the semaphore hold exactly `permits` available permits.
void set_permits(relock::semaphore& semaphore, std::int64_t permits) {
  if (semaphore.try_set_permits(permits)) return;
  if (const auto off = permits - semaphore.available_permits(); off != 0) {
    semaphore.add_permits(off);
  }
}

}  // namespace

result run_semaphore(const options& o) {
  relock::client client(client_settings(o));
  const int threads = o.threads;
  const int permits = std::max(1, threads / 2);
  constexpr std::int64_t max_pairs_per_thread = 1'000'000;

  {  // Warm-up, on a name of its own.
    auto warm = client.semaphore("bench:semaphore:warmup");
    set_permits(warm, permits);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          warm.acquire(1);
          warm.release(1);
        }
      });
    }
    for (auto& t : ts) t.join();
  }

  // The measured semaphore: set afresh (bench/run flushed the server; a hand run may not have).
  auto semaphore = client.semaphore("bench:semaphore");
  set_permits(semaphore, permits);
  server_probe probe(o.probe());

  std::vector<samples> wait(threads), pair(threads);
  std::vector<std::int64_t> pairs(threads, 0), errors(threads, 0), cancelled(threads, 0);
  std::atomic<int> holders{0}, most_holders{0}, finished{0};
  std::atomic<std::int64_t> overlaps{0};
  std::latch ready(threads + 1), go(1);
  clock::time_point end;
  std::stop_source stop;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto sem = client.semaphore("bench:semaphore");
      wait[t].reserve(100'000);
      pair[t].reserve(100'000);
      ready.count_down();
      go.wait();
      for (auto now = clock::now(); pairs[t] < max_pairs_per_thread && now < end; ++pairs[t]) {
        try {
          sem.acquire(1, stop.get_token());
        } catch (const relock::error& e) {
          ++(e.code() == relock::errc::cancelled ? cancelled : errors)[t];
          break;
        }
        const auto acquired = clock::now();
        wait[t].add(acquired - now);
        const int inside = holders.fetch_add(1) + 1;
        if (inside > permits) ++overlaps;
        for (int m = most_holders.load();
             inside > m && !most_holders.compare_exchange_weak(m, inside);) {
        }
        holders.fetch_sub(1);
        try {
          sem.release(1);
        } catch (const relock::error&) {
          ++errors[t];
        }
        const auto after = clock::now();
        pair[t].add(after - now);
        now = after;
      }
      finished.fetch_add(1);
    });
  }
  ready.arrive_and_wait();
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point window_end) {
    end = window_end;
    go.count_down();
    join_or_cancel(workers, finished, window_end + std::chrono::seconds(3), stop);
  });

  const std::int64_t available = semaphore.available_permits();
  samples waits, all;
  std::int64_t total = 0, failed = 0, cancels = 0;
  for (int t = 0; t < threads; ++t) {
    waits.merge(wait[t]);
    all.merge(pair[t]);
    total += pairs[t];
    failed += errors[t];
    cancels += cancelled[t];
  }
  result r = make_result(o);
  r.set("pairs_per_s", static_cast<double>(total) / window)
      .set("pair_p50_us", all.percentile_us(0.50))
      .set("pair_p99_us", all.percentile_us(0.99))
      .set("pair_max_us", all.max_us())
      .set("wait_p50_us", waits.percentile_us(0.50))
      .set("wait_p99_us", waits.percentile_us(0.99))
      .set("wait_max_us", waits.max_us())
      .set("threads", static_cast<std::int64_t>(threads))
      .set("permits", static_cast<std::int64_t>(permits))
      .set("pairs", total)
      .set("most_holders", static_cast<std::int64_t>(most_holders.load()))
      .set("overlaps", overlaps.load())
      .set("permits_lost", static_cast<std::int64_t>(permits) - available)
      .set("cancelled", cancels)
      .set("errors", failed);
  add_common(r, o, window, cpu, server, total);
  return r;
}

}  // namespace relock_bench
