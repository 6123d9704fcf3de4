// SPDX-License-Identifier: Apache-2.0
// uncontended: one thread, one lock, lock() + unlock() pairs back to back. The floor is two
// round trips (acquire script, release script); everything above it is relock's own cost.
//
// fenced-uncontended: the same loop on a fenced lock (client.fenced_lock, Redisson's
// RFencedLock), lock_and_get_token() + unlock() pairs. A pair is the same two round trips as a
// reentrant pair (the acquire script also takes the next token from redisson_lock_token:{name});
// bench/run sets its p50 beside uncontended's of the same repetition. One thread alone on the
// lock takes every token in turn, so each token must be the previous one + 1: `token_gaps`
// counts those that were not (0 expected).
#include <cstdint>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

// What uncontended checks after each pair: nothing.
struct no_check {
  void operator()(std::int64_t) {}
  void open() {}
  void report(result&) const {}
};

// What fenced-uncontended checks: each token the previous one + 1.
struct token_check {
  std::int64_t last = 0, first = 0, gaps = 0;
  void operator()(std::int64_t token) {
    if (token != last + 1) ++gaps;
    last = token;
  }
  void open() {  // the window opens: the warm-up's last token tells its first
    first = last + 1;
    gaps = 0;
  }
  void report(result& r) const {
    r.set("first_token", first).set("last_token", last).set("token_gaps", gaps);
  }
};

// The pair loop of both: acquire() (lock() or lock_and_get_token(): the token, or 0), then
// unlock(), back to back; check(what acquire returned) after each pair.
template <class Acquire, class Check>
result run_pairs(const options& o, relock::mutex& lock, Acquire acquire, Check check) {
  // Warm-up: scripts loaded (the first EVALSHA meets NOSCRIPT), allocations and caches warm.
  for (int i = 0; i < 200; ++i) {
    check(acquire());
    lock.unlock();
  }
  check.open();

  server_probe probe(o.probe());
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
    const std::int64_t acquired = acquire();
    std::error_code ec;
    lock.unlock(ec);
    if (ec) ++errors;
    const auto after = clock::now();
    pair.add(after - now);
    now = after;
    check(acquired);
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
  check.report(r);
  add_common(r, o, window, cpu, server, pairs);
  return r;
}

}  // namespace

result run_uncontended(const options& o) {
  if (o.variant == "async") return run_async_pairs(o, 1);
  relock::config settings = client_settings(o);
  relock::client client(settings);
  auto lock = client.lock("bench:uncontended");
  auto acquire = [&] {
    lock.lock();
    return std::int64_t{0};
  };
  return run_pairs(o, lock, acquire, no_check{});
}

result run_fenced_uncontended(const options& o) {
  relock::config settings = client_settings(o);
  relock::client client(settings);
  auto lock = client.fenced_lock("bench:fenced-uncontended");
  auto acquire = [&] { return lock.lock_and_get_token(); };
  return run_pairs(o, lock, acquire, token_check{});
}

}  // namespace relock_bench
