// handoff: T threads on one lock. The holder keeps it 1 ms, releases, then waits until another
// thread holds it before queueing again, so every release is a handoff to a waiter (no thread
// takes its own lock back). Handoff latency runs from the start of the unlock() call to the
// moment another thread's lock() returns: release, pub/sub message, wake-up, acquire.
#include <atomic>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <stop_token>
#include <thread>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

std::int64_t ticks(clock::time_point t) { return t.time_since_epoch().count(); }

}  // namespace

result run_handoff(const options& o) {
  relock::config settings = client_settings(o);
  relock::client client(settings);
  server_probe probe(o.url);
  {
    auto warm = client.lock("bench:handoff");
    for (int i = 0; i < 100; ++i) {
      warm.lock();
      warm.unlock();
    }
  }

  const int threads = o.threads;
  constexpr auto hold = std::chrono::milliseconds(1);
  constexpr std::int64_t max_acquisitions_per_thread = 100'000;
  constexpr auto grace = std::chrono::seconds(3);
  std::vector<samples> wait(threads), handoff(threads);
  std::atomic<std::int64_t> unlock_started{0};  // clock ticks; 0 = no unlock to hand off from
  std::atomic<std::int64_t> cancelled{0}, errors{0}, overlaps{0}, self_handoffs{0};
  std::atomic<int> inside{0}, finished{0}, last_holder{-1};
  std::mutex m;
  std::condition_variable held_by_new_owner;
  std::uint64_t generation = 0;  // under m: bumps with every acquisition
  std::stop_source stop;
  std::latch ready(threads + 1), go(1);
  clock::time_point end;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto lock = client.lock("bench:handoff");
      wait[t].reserve(10'000);
      handoff[t].reserve(10'000);
      ready.count_down();
      go.wait();
      for (std::int64_t n = 0; n < max_acquisitions_per_thread; ++n) {
        const auto asked = clock::now();
        if (asked >= end) break;
        try {
          lock.lock(stop.get_token());
        } catch (const relock::error& e) {
          (e.code() == relock::errc::cancelled ? cancelled : errors)++;
          break;
        }
        const auto acquired = clock::now();
        wait[t].add(acquired - asked);
        if (auto from = unlock_started.exchange(0); from != 0) {
          handoff[t].add(acquired - clock::time_point(clock::duration(from)));
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        if (last_holder.exchange(t) == t) ++self_handoffs;
        std::uint64_t mine;
        {
          std::lock_guard g(m);
          mine = ++generation;
        }
        held_by_new_owner.notify_all();

        std::this_thread::sleep_for(hold);
        inside.fetch_sub(1);
        unlock_started.store(ticks(clock::now()));
        std::error_code ec;
        lock.unlock(ec);
        if (ec) ++errors;
        // Wait for another thread to take it, so this thread cannot take its own lock back.
        std::unique_lock g(m);
        if (!held_by_new_owner.wait_until(g, end, [&] { return generation != mine; })) break;
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

  samples waits, handoffs;
  for (int t = 0; t < threads; ++t) {
    waits.merge(wait[t]);
    handoffs.merge(handoff[t]);
  }
  const auto acquisitions = static_cast<std::int64_t>(waits.count());
  result r = make_result(o);
  r.set("acq_per_s", static_cast<double>(acquisitions) / window)
      .set("handoff_p50_us", handoffs.percentile_us(0.50))
      .set("handoff_p99_us", handoffs.percentile_us(0.99))
      .set("handoff_max_us", handoffs.max_us())
      .set("handoffs_per_s", static_cast<double>(handoffs.count()) / window)
      .set("wait_p50_us", waits.percentile_us(0.50))
      .set("wait_p99_us", waits.percentile_us(0.99))
      .set("wait_max_us", waits.max_us())
      .set("threads", static_cast<std::int64_t>(threads))
      .set("handoffs", static_cast<std::int64_t>(handoffs.count()))
      .set("cancelled", cancelled.load())
      .set("errors", errors.load())
      .set("overlaps", overlaps.load())
      .set("self_handoffs", self_handoffs.load());
  add_common(r, o, window, cpu, server, acquisitions);
  return r;
}

}  // namespace relock_bench
