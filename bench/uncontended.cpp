// uncontended: one thread, one lock, lock() + unlock() pairs back to back. The floor is two
// round trips (acquire script, release script); everything above it is relock's own cost.
#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {

result run_uncontended(const options& o) {
  if (o.variant == "async") return run_async_pairs(o, 1);
  relock::config settings = client_settings(o);
  relock::client client(settings);
  auto lock = client.lock("bench:uncontended");
  // Warm-up: scripts loaded (the first EVALSHA meets NOSCRIPT), allocations and caches warm.
  for (int i = 0; i < 200; ++i) {
    lock.lock();
    lock.unlock();
  }

  server_probe probe(o.url);
  constexpr std::int64_t max_pairs = 2'000'000;
  samples pair;
  pair.reserve(200'000);
  std::int64_t pairs = 0, errors = 0;
  probe.start();
  const double cpu0 = process_cpu_seconds();
  const auto t0 = clock::now();
  const auto end =
      t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.seconds));
  for (auto now = t0; pairs < max_pairs && now < end; ++pairs) {
    lock.lock();
    std::error_code ec;
    lock.unlock(ec);
    if (ec) ++errors;
    const auto after = clock::now();
    pair.add(after - now);
    now = after;
  }
  const double window = std::chrono::duration<double>(clock::now() - t0).count();
  const double cpu = process_cpu_seconds() - cpu0;
  const auto server = probe.stop();

  result r = make_result(o);
  r.set("pairs_per_s", static_cast<double>(pairs) / window)
      .set("pair_p50_us", pair.percentile_us(0.50))
      .set("pair_p99_us", pair.percentile_us(0.99))
      .set("pair_max_us", pair.max_us())
      .set("pairs", pairs)
      .set("errors", errors);
  add_common(r, o, window, cpu, server, pairs);
  return r;
}

}  // namespace relock_bench
