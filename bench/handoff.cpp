// SPDX-License-Identifier: Apache-2.0
// handoff: T threads on one lock. The holder keeps it 1 ms, releases, then waits until another
// thread holds it before queueing again, so every release is a handoff to a waiter (no thread
// takes its own lock back). Handoff latency runs from the start of the unlock() call to the
// moment another thread's lock() returns: release, pub/sub message, wake-up, acquire.
// fair-handoff: the same loop on a fair lock (client.fair_lock; Redisson's RFairLock in the
// peer), whose release tells the head waiter alone.
//
// FIFO: every lock() call takes a ticket, the next number of one sequence, just before it
// starts; an acquisition is out of order when another thread still waiting holds an older
// ticket (`out_of_order`: 0 for a fair lock; `fifo_checked` counts the acquisitions checked).
// For the tickets to follow the order in which the waits reached the server, waiters join the
// queue one at a time:
// - fair lock: before the window, thread 0 takes the lock, then threads 1..T-1 call lock() in
//   turn, each once the server's queue (client.inspect) holds exactly the threads before it
//   and itself last; thread 0 holds until the window opens (its first wait is not a sample,
//   nor are the others' first waits, which began before the window);
// - reentrant lock: Redis keeps no queue of its waiters to stage by, so every thread makes its
//   first lock() call as the window opens, all at once. Those first waits are samples but take
//   no ticket (they follow no order of arrival): their acquisitions are not checked, and no
//   acquisition counts as out of order for passing them;
// - in the window one thread alone starts waiting per hold: the previous holder, once its
//   successor holds (every other thread is queued already), and the next one more than a hold
//   (1 ms) later. A ticket could only be out of the server's order if a thread stalled for over
//   a hold between taking it and its acquire reaching Redis.
//
// --clients C spreads the threads over C relock::clients (thread t on client t % C; default 1).
// Within one client relock's own waiter queue already wakes that client's waiters in the order
// they came, so the reentrant lock passes the FIFO check too there (a scratch run: 0 of 962 out
// of order); only waiters of different clients put the order in the server's hands (2 clients:
// reentrant lock 403 of 735 out of order, fair lock 0 of 659).
#include <atomic>
#include <condition_variable>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

std::int64_t ticks(clock::time_point t) { return t.time_since_epoch().count(); }
clock::time_point at(std::int64_t ticks) { return clock::time_point(clock::duration(ticks)); }

// What handoff and fair-handoff differ in.
struct lock_kind {
  std::string name;                                               // the lock's name
  relock::mutex (relock::client::*make)(std::string_view) const;  // client::lock, ::fair_lock
  bool staged;  // its waiters queue in Redis (client.inspect): build the queue before the window
};

result run_handoff_on(const options& o, const lock_kind& kind) {
  relock::config settings = client_settings(o);
  std::vector<std::unique_ptr<relock::client>> clients;
  auto lock_on = [&](relock::client& c) { return (c.*kind.make)(kind.name); };
  for (int c = 0; c < o.clients; ++c) {
    clients.push_back(std::make_unique<relock::client>(settings));
    auto warm = lock_on(*clients.back());
    for (int i = 0; i < 100; ++i) {
      warm.lock();
      warm.unlock();
    }
  }
  relock::client& client = *clients.front();
  server_probe probe(o.probe());

  const int threads = o.threads;
  constexpr auto hold = std::chrono::milliseconds(1);
  constexpr std::int64_t max_acquisitions_per_thread = 100'000;
  constexpr auto grace = std::chrono::seconds(3);
  constexpr auto staging_limit = std::chrono::seconds(10);
  constexpr std::uint64_t no_ticket = std::numeric_limits<std::uint64_t>::max();
  std::vector<samples> wait(threads), handoff(threads);
  std::vector<std::string> fields(threads);     // each thread's owner field, as queued
  std::atomic<std::int64_t> unlock_started{0};  // clock ticks; 0 = no unlock to hand off from
  std::atomic<std::int64_t> cancelled{0}, errors{0}, overlaps{0}, self_handoffs{0};
  std::atomic<int> inside{0}, finished{0}, last_holder{-1};
  std::atomic<int> stage{-1};  // staged: thread t makes its first lock() call once stage >= t
  std::atomic<bool> first_held{false};
  std::atomic<std::int64_t> end{std::numeric_limits<std::int64_t>::max()};  // set before go
  std::mutex m;
  std::condition_variable held_by_new_owner;
  // Under m:
  std::uint64_t generation = 0;  // bumps with every acquisition
  std::uint64_t next_ticket = 0;
  std::vector<std::uint64_t> ticket(threads, no_ticket);  // a waiting thread's ticket
  std::int64_t fifo_checked = 0, out_of_order = 0;
  std::stop_source stop;
  std::latch ready(threads + 1), go(1);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto lock = lock_on(*clients[static_cast<std::size_t>(t % o.clients)]);
      fields[t] = lock.owner_field(relock::owner::current_thread());
      wait[t].reserve(10'000);
      handoff[t].reserve(10'000);
      ready.count_down();
      if (kind.staged) {
        for (int s = stage.load(); s < t; s = stage.load()) stage.wait(s);
      } else {
        go.wait();
      }
      bool first = true;  // this thread's first lock() call (see the top of this file)
      for (std::int64_t n = 0; n < max_acquisitions_per_thread; ++n) {
        const bool before_window = first && kind.staged;  // staged: no wait sample
        const bool unordered = first && !kind.staged;     // all at once: no ticket
        const auto asked = clock::now();
        {
          std::lock_guard g(m);
          if (!before_window && ticks(asked) >= end.load()) break;
          if (!unordered) ticket[t] = next_ticket++;
        }
        try {
          lock.lock(stop.get_token());
        } catch (const relock::error& e) {
          (e.code() == relock::errc::cancelled ? cancelled : errors)++;
          std::lock_guard g(m);
          ticket[t] = no_ticket;
          break;
        }
        const auto acquired = clock::now();
        if (!before_window) wait[t].add(acquired - asked);
        if (auto from = unlock_started.exchange(0); from != 0) {
          handoff[t].add(acquired - at(from));
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        if (last_holder.exchange(t) == t) ++self_handoffs;
        std::uint64_t mine;
        {
          std::lock_guard g(m);
          if (!unordered) {
            ++fifo_checked;
            for (int u = 0; u < threads; ++u) {
              if (u != t && ticket[u] < ticket[t]) {  // u asked earlier and still waits
                ++out_of_order;
                break;
              }
            }
          }
          ticket[t] = no_ticket;
          mine = ++generation;
        }
        held_by_new_owner.notify_all();
        if (before_window && t == 0) {  // the first holder holds until the window opens
          first_held.store(true);
          go.wait();
        }
        first = false;

        std::this_thread::sleep_for(hold);
        inside.fetch_sub(1);
        unlock_started.store(ticks(clock::now()));
        std::error_code ec;
        lock.unlock(ec);
        if (ec) ++errors;
        // Wait for another thread to take it, so this thread cannot take its own lock back.
        std::unique_lock g(m);
        if (!held_by_new_owner.wait_until(g, at(end.load()), [&] { return generation != mine; })) {
          break;
        }
      }
      ++finished;
    });
  }
  ready.arrive_and_wait();

  // Staged: build the queue one waiter at a time (see the top of this file).
  std::string staging_error;
  try {
    const auto deadline = clock::now() + staging_limit;
    for (int t = 0; kind.staged && t < threads && staging_error.empty(); ++t) {
      stage.store(t);
      stage.notify_all();
      for (;;) {
        bool in_place = t == 0 && first_held.load();
        if (t > 0) {
          const auto info = client.inspect(kind.name);
          in_place = info.waiters.size() == static_cast<std::size_t>(t);
          for (std::size_t i = 0; in_place && i < info.waiters.size(); ++i) {
            in_place = info.waiters[i].owner == fields[i + 1];
          }
        }
        if (in_place) break;
        if (clock::now() > deadline) {
          staging_error = "thread " + std::to_string(t) + " was not queued in turn within 10 s";
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  } catch (const std::exception& e) {
    staging_error = std::string("queueing the waiters: ") + e.what();
  }
  if (!staging_error.empty()) {
    end.store(ticks(clock::now()));
    stage.store(threads);
    stage.notify_all();
    stop.request_stop();
    go.count_down();
    for (auto& w : workers) w.join();
    throw std::runtime_error(staging_error);
  }

  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point window_end) {
    end.store(ticks(window_end));
    go.count_down();
    join_or_cancel(workers, finished, window_end + grace, stop);
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
      .set("clients", static_cast<std::int64_t>(o.clients))
      .set("handoffs", static_cast<std::int64_t>(handoffs.count()))
      .set("fifo_checked", fifo_checked)
      .set("out_of_order", out_of_order)
      .set("cancelled", cancelled.load())
      .set("errors", errors.load())
      .set("overlaps", overlaps.load())
      .set("self_handoffs", self_handoffs.load());
  add_common(r, o, window, cpu, server, acquisitions);
  return r;
}

}  // namespace

result run_handoff(const options& o) {
  return run_handoff_on(o, {"bench:handoff", &relock::client::lock, false});
}

result run_fair_handoff(const options& o) {
  return run_handoff_on(o, {"bench:fair-handoff", &relock::client::fair_lock, true});
}

}  // namespace relock_bench
