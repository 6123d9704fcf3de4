// SPDX-License-Identifier: Apache-2.0
// one-lock: T threads on one lock, empty critical section. Counts acquisitions, how often the
// lock changed hands (a thread that releases may take it straight back), and the longest wait.
#include <atomic>
#include <latch>
#include <stop_token>
#include <thread>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {

result run_one_lock(const options& o) {
  relock::config settings = client_settings(o);
  relock::client client(settings);
  server_probe probe(o.probe());
  {
    auto warm = client.lock("bench:one-lock");
    for (int i = 0; i < 100; ++i) {
      warm.lock();
      warm.unlock();
    }
  }

  const int threads = o.threads;
  constexpr std::int64_t max_acquisitions_per_thread = 1'000'000;
  // After the window, a thread still blocked in lock() gets this long before it is cancelled.
  constexpr auto grace = std::chrono::seconds(3);
  std::vector<samples> wait(threads);
  std::vector<std::int64_t> acquisitions(threads, 0);
  std::atomic<int> last_holder{-1};
  std::atomic<std::int64_t> owner_changes{0}, cancelled{0}, errors{0}, overlaps{0};
  std::atomic<int> inside{0}, finished{0};
  std::stop_source stop;
  std::latch ready(threads + 1), go(1);
  clock::time_point end;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto lock = client.lock("bench:one-lock");
      wait[t].reserve(50'000);
      ready.count_down();
      go.wait();
      for (auto now = clock::now(); acquisitions[t] < max_acquisitions_per_thread && now < end;
           now = clock::now()) {
        try {
          lock.lock(stop.get_token());
        } catch (const relock::error& e) {
          (e.code() == relock::errc::cancelled ? cancelled : errors)++;
          break;
        }
        wait[t].add(clock::now() - now);
        ++acquisitions[t];
        if (inside.fetch_add(1) != 0) ++overlaps;
        if (last_holder.exchange(t) != t) ++owner_changes;
        inside.fetch_sub(1);
        std::error_code ec;
        lock.unlock(ec);
        if (ec) ++errors;
      }
      ++finished;
    });
  }
  ready.arrive_and_wait();
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point window_end) {
    end = window_end;
    go.count_down();
    join_or_cancel(workers, finished, end + grace, stop);
  });

  samples all;
  std::int64_t total = 0;
  for (int t = 0; t < threads; ++t) {
    all.merge(wait[t]);
    total += acquisitions[t];
  }
  result r = make_result(o);
  r.set("acq_per_s", static_cast<double>(total) / window)
      .set("wait_p50_us", all.percentile_us(0.50))
      .set("wait_p99_us", all.percentile_us(0.99))
      .set("wait_max_us", all.max_us())
      .set("owner_changes_per_s", static_cast<double>(owner_changes.load()) / window)
      .set("threads", static_cast<std::int64_t>(threads))
      .set("acquisitions", total)
      .set("cancelled", cancelled.load())
      .set("errors", errors.load())
      .set("overlaps", overlaps.load());
  add_common(r, o, window, cpu, server, total);
  return r;
}

}  // namespace relock_bench
