// SPDX-License-Identifier: Apache-2.0
// The read-write lock (relock::read_write_lock, Redisson's RReadWriteLock), through the sync API:
// every worker thread is an owner and calls rw.read_lock() / rw.write_lock() lock() and unlock().
//
// rw-read: T threads take and release the read side of one lock, empty critical section. Readers
// share, so nobody waits for anybody: acquisitions/s and the pair (lock + unlock) latency, to set
// next to one-lock (T threads on one reentrant lock: a contended handoff) and uncontended (a
// reentrant pair, two round trips).
//
// rw-mixed: T threads on one lock; each loop a seeded RNG picks a read (90 %) or a write (10 %).
// A write holds the lock 1 ms (a sleep inside the hold), a read holds nothing. Reads/s, writes/s
// and the write wait: from asking for the write lock to getting it.
#include <atomic>
#include <latch>
#include <random>
#include <stop_token>
#include <thread>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

// After the window, a thread still blocked in lock() gets this long before it is cancelled.
constexpr auto grace = std::chrono::seconds(3);

// The measured window around o.threads workers on one client: body(t, end, stop) runs on
// worker t once every worker has started and the window is open, and returns when its loop
// ends (on the clock or its count); a lock() still blocked `grace` after the window is
// cancelled through `stop`.
template <class Body>
window_figures run_workers(const options& o, server_probe& probe, Body body) {
  std::atomic<int> finished{0};
  std::stop_source stop;
  std::latch ready(o.threads + 1), go(1);
  clock::time_point end;
  std::vector<std::thread> workers;
  for (int t = 0; t < o.threads; ++t) {
    workers.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      body(t, end, stop.get_token());
      ++finished;
    });
  }
  ready.arrive_and_wait();
  return run_window(o, probe, [&](clock::time_point window_end) {
    end = window_end;
    go.count_down();
    join_or_cancel(workers, finished, end + grace, stop);
  });
}

// Counts a failed lock(): cancelled (the window's end) or another error. false: stop the loop.
bool locked(relock::mutex& side, std::stop_token stop, std::atomic<std::int64_t>& cancelled,
            std::atomic<std::int64_t>& errors) {
  try {
    side.lock(stop);
    return true;
  } catch (const relock::error& e) {
    (e.code() == relock::errc::cancelled ? cancelled : errors)++;
    return false;
  }
}

// A scenario's client and server probe, warm: the scripts of the sides it uses loaded (the
// first EVALSHA meets NOSCRIPT), connections and caches warm.
struct warm_client {
  relock::client client;
  server_probe probe;

  warm_client(const options& o, const char* name, bool writes)
      : client(client_settings(o)), probe(o.probe()) {
    auto rw = client.read_write_lock(name);
    for (int i = 0; i < 100; ++i) {
      rw.read_lock().lock();
      rw.read_lock().unlock();
      if (writes) {
        rw.write_lock().lock();
        rw.write_lock().unlock();
      }
    }
  }
};

}  // namespace

result run_rw_read(const options& o) {
  warm_client c(o, "bench:rw-read", false);

  const int threads = o.threads;
  constexpr std::int64_t max_pairs_per_thread = 1'000'000;
  std::vector<relock::read_write_lock> rws;
  std::vector<samples> pair(threads);
  for (int t = 0; t < threads; ++t) {
    rws.push_back(c.client.read_write_lock("bench:rw-read"));
    pair[t].reserve(50'000);
  }
  std::vector<std::int64_t> pairs(threads, 0);
  std::atomic<std::int64_t> cancelled{0}, errors{0};
  const auto [window, cpu, server] =
      run_workers(o, c.probe, [&](int t, clock::time_point end, std::stop_token stop) {
        auto& read = rws[t].read_lock();
        for (auto now = clock::now(); pairs[t] < max_pairs_per_thread && now < end;) {
          if (!locked(read, stop, cancelled, errors)) break;
          std::error_code ec;
          read.unlock(ec);
          if (ec) ++errors;
          ++pairs[t];
          const auto after = clock::now();
          pair[t].add(after - now);
          now = after;
        }
      });

  samples all;
  std::int64_t total = 0;
  for (int t = 0; t < threads; ++t) {
    all.merge(pair[t]);
    total += pairs[t];
  }
  result r = make_result(o);
  r.set("acq_per_s", static_cast<double>(total) / window)
      .set("pair_p50_us", all.percentile_us(0.50))
      .set("pair_p99_us", all.percentile_us(0.99))
      .set("pair_max_us", all.max_us())
      .set("threads", static_cast<std::int64_t>(threads))
      .set("acquisitions", total)
      .set("cancelled", cancelled.load())
      .set("errors", errors.load());
  add_common(r, o, window, cpu, server, total);
  return r;
}

result run_rw_mixed(const options& o) {
  warm_client c(o, "bench:rw-mixed", true);

  const int threads = o.threads;
  constexpr double write_share = 0.10;
  constexpr auto hold = std::chrono::milliseconds(1);
  constexpr std::int64_t max_ops_per_thread = 1'000'000;
  constexpr std::uint32_t seed = 20261123;  // thread t draws from seed + t: the same every run
  std::vector<relock::read_write_lock> rws;
  std::vector<samples> read_wait(threads), write_wait(threads);
  for (int t = 0; t < threads; ++t) {
    rws.push_back(c.client.read_write_lock("bench:rw-mixed"));
    read_wait[t].reserve(50'000);
    write_wait[t].reserve(5'000);
  }
  std::atomic<std::int64_t> cancelled{0}, errors{0}, overlaps{0};
  std::atomic<int> readers_inside{0}, writers_inside{0};
  const auto [window, cpu, server] =
      run_workers(o, c.probe, [&](int t, clock::time_point end, std::stop_token stop) {
        auto& read = rws[t].read_lock();
        auto& write = rws[t].write_lock();
        std::mt19937 rng(seed + static_cast<std::uint32_t>(t));
        std::bernoulli_distribution writes(write_share);
        for (std::int64_t n = 0; n < max_ops_per_thread; ++n) {
          const auto asked = clock::now();
          if (asked >= end) break;
          const bool is_write = writes(rng);
          relock::mutex& side = is_write ? write : read;
          if (!locked(side, stop, cancelled, errors)) break;
          (is_write ? write_wait : read_wait)[t].add(clock::now() - asked);
          if (is_write) {
            if (writers_inside.fetch_add(1) != 0 || readers_inside.load() != 0) ++overlaps;
            std::this_thread::sleep_for(hold);
            writers_inside.fetch_sub(1);
          } else {
            readers_inside.fetch_add(1);
            if (writers_inside.load() != 0) ++overlaps;
            readers_inside.fetch_sub(1);
          }
          std::error_code ec;
          side.unlock(ec);
          if (ec) ++errors;
        }
      });

  samples reads, writes;
  for (int t = 0; t < threads; ++t) {
    reads.merge(read_wait[t]);
    writes.merge(write_wait[t]);
  }
  const auto n_reads = static_cast<std::int64_t>(reads.count());
  const auto n_writes = static_cast<std::int64_t>(writes.count());
  result r = make_result(o);
  r.set("acq_per_s", static_cast<double>(n_reads + n_writes) / window)
      .set("reads_per_s", static_cast<double>(n_reads) / window)
      .set("writes_per_s", static_cast<double>(n_writes) / window)
      .set("write_wait_p50_us", writes.percentile_us(0.50))
      .set("write_wait_p99_us", writes.percentile_us(0.99))
      .set("write_wait_max_us", writes.max_us())
      .set("read_wait_p50_us", reads.percentile_us(0.50))
      .set("read_wait_p99_us", reads.percentile_us(0.99))
      .set("read_wait_max_us", reads.max_us())
      .set("threads", static_cast<std::int64_t>(threads))
      .set("reads", n_reads)
      .set("writes", n_writes)
      .set("cancelled", cancelled.load())
      .set("errors", errors.load())
      .set("overlaps", overlaps.load());
  add_common(r, o, window, cpu, server, n_reads + n_writes);
  return r;
}

}  // namespace relock_bench
