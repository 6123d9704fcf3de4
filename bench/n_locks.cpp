// SPDX-License-Identifier: Apache-2.0
// n-locks: T threads, T locks, each thread on its own lock: no contention, but every thread
// shares the client's pipelined command connections, so this measures throughput under load.
// cluster-n-locks runs the same with a redis-cluster:// URL: the same names, whose slots spread
// them over the masters (bench:n-locks:0..7 land 2 / 4 / 2 on redis-cli's three slot ranges),
// each master with its own connections.
#include <latch>
#include <thread>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {

result run_n_locks(const options& o) {
  if (o.variant == "async") return run_async_pairs(o, o.threads);
  relock::config settings = client_settings(o);
  relock::client client(settings);
  server_probe probe(o.probe());

  const int threads = o.threads;
  constexpr std::int64_t max_pairs_per_thread = 1'000'000;
  std::vector<samples> pair(threads);
  std::vector<std::int64_t> pairs(threads, 0), errors(threads, 0);
  std::latch warmed(threads + 1), go(1);
  clock::time_point end;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto lock = client.lock("bench:n-locks:" + std::to_string(t));
      for (int i = 0; i < 100; ++i) {
        lock.lock();
        lock.unlock();
      }
      pair[t].reserve(100'000);
      warmed.count_down();
      go.wait();
      for (auto now = clock::now(); pairs[t] < max_pairs_per_thread && now < end; ++pairs[t]) {
        lock.lock();
        std::error_code ec;
        lock.unlock(ec);
        if (ec) ++errors[t];
        const auto after = clock::now();
        pair[t].add(after - now);
        now = after;
      }
    });
  }
  warmed.arrive_and_wait();
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point window_end) {
    end = window_end;
    go.count_down();
    for (auto& w : workers) w.join();
  });

  samples all;
  std::int64_t total = 0, failed = 0;
  for (int t = 0; t < threads; ++t) {
    all.merge(pair[t]);
    total += pairs[t];
    failed += errors[t];
  }
  result r = make_result(o);
  r.set("pairs_per_s", static_cast<double>(total) / window)
      .set("pair_p50_us", all.percentile_us(0.50))
      .set("pair_p99_us", all.percentile_us(0.99))
      .set("pair_max_us", all.max_us())
      .set("threads", static_cast<std::int64_t>(threads))
      .set("pairs", total)
      .set("errors", failed);
  add_common(r, o, window, cpu, server, total);
  return r;
}

}  // namespace relock_bench
