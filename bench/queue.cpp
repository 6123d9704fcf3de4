// SPDX-License-Identifier: Apache-2.0
// The queues (Redisson's RBlockingQueue and RDelayedQueue): two scenarios, one client each.
//
// queue: offer + take pairs with P producer threads and C consumer threads (--threads T: P = T/2,
// C = T - P; 4 + 4 by default) on one blocking_queue. Producers offer (RPUSH) as fast as they can
// until the window ends, each value naming its producer and sequence number ("p<t>:<seq>");
// consumers take() (BLPOP) and note what they got. pairs_per_s counts the elements taken inside
// the window, per second of it (each was offered once: a pair). Once the producers have stopped,
// one "stop" element per consumer goes to the tail, so the consumers drain the backlog and end
// on it (FIFO: after every element offered); a take still waiting 30 s after the window is
// cancelled through its stop_token. Then every element is checked: each offered one taken
// exactly once (lost, duplicates), nothing left in the list. The server figures cover the window
// (offers and takes until the producers have stopped), not the drain.
//
// queue-delayed: one thread offers to a delayed_queue at a steady 1,000 elements/s for the window,
// each with a delay in [0, 2000] ms (splitmix64 of the repetition and the element's index, the
// same sequence as the Redisson peer's), its value "<index>:<due>" with the due time in
// wall-clock ms (read just before the offer, so at or before the library's own); the client that
// holds the delayed_queue runs the transfer; another thread take()s from the destination and
// notes, per element, arrival (wall clock, microseconds) minus due time: the lateness. Early
// (arrival before due; 0 expected), lost and duplicated elements are counted. The window's
// figures run until every element has arrived, or 5 s after the last one came due.
//
// Each scenario warms up on a name of its own first (scripts loaded, connections made), so a
// warm-up element can never reach the measured loop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "driver.hpp"

namespace relock_bench {

namespace {

using namespace std::chrono_literals;

const std::string stop_element = "stop";

// "p<t>:<seq>" -> t << 40 | seq; nullopt for anything else.
std::optional<std::uint64_t> element_id(const std::string& v) {
  if (v.size() < 4 || v[0] != 'p') return std::nullopt;
  const auto colon = v.find(':');
  if (colon == std::string::npos || colon < 2 || colon + 1 >= v.size()) return std::nullopt;
  try {
    const auto t = std::stoull(v.substr(1, colon - 1));
    const auto seq = std::stoull(v.substr(colon + 1));
    return t << 40 | seq;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// splitmix64 (Steele, Lea, Flood 2014), as java.util.SplittableRandom mixes: the delays of
// queue-delayed, the same in the Redisson peer.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

result run_queue(const options& o) {
  relock::client client(client_settings(o));
  const int producers = std::max(1, o.threads / 2);
  const int consumers = std::max(1, o.threads - producers);

  // Warm-up, on a name of its own: every connection made (the consumers' blocking ones too).
  {
    auto warm = client.blocking_queue("bench:queue:warmup");
    std::vector<std::thread> ts;
    for (int t = 0; t < consumers; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < 200; ++i) warm.take();
      });
    }
    for (int i = 0; i < 200 * consumers; ++i) warm.offer("p0:" + std::to_string(i));
    for (auto& t : ts) t.join();
    warm.clear();
  }

  auto queue = client.blocking_queue("bench:queue");
  queue.clear();
  server_probe probe(o.probe());

  constexpr std::int64_t max_per_producer = 1'000'000;
  std::vector<std::int64_t> offered(producers, 0), in_window(consumers, 0),
      errors(producers + consumers, 0);
  std::vector<samples> offer_time(producers);
  std::vector<std::vector<std::uint64_t>> got(consumers);
  std::vector<std::int64_t> foreign(consumers, 0), cancelled(consumers, 0);
  std::latch ready(producers + consumers + 1), go(1);
  clock::time_point end;
  std::stop_source stop;
  std::atomic<int> consumers_done{0};
  std::vector<std::thread> producer_threads, consumer_threads;
  for (int t = 0; t < producers; ++t) {
    producer_threads.emplace_back([&, t] {
      offer_time[t].reserve(200'000);
      const std::string prefix = "p" + std::to_string(t) + ":";
      ready.count_down();
      go.wait();
      for (auto now = clock::now(); now < end && offered[t] < max_per_producer;) {
        try {
          queue.offer(prefix + std::to_string(offered[t]));
          ++offered[t];
        } catch (const relock::error&) {
          ++errors[t];  // not offered: the next try uses the same number
        }
        const auto after = clock::now();
        offer_time[t].add(after - now);
        now = after;
      }
    });
  }
  for (int c = 0; c < consumers; ++c) {
    consumer_threads.emplace_back([&, c] {
      got[c].reserve(400'000);
      ready.count_down();
      go.wait();
      for (;;) {
        std::string v;
        try {
          v = queue.take(stop.get_token());
        } catch (const relock::error& e) {
          if (e.code() == relock::errc::cancelled) {
            ++cancelled[c];
            break;
          }
          ++errors[producers + c];
          continue;
        }
        if (v == stop_element) break;
        if (clock::now() < end) ++in_window[c];
        if (auto id = element_id(v))
          got[c].push_back(*id);
        else
          ++foreign[c];
      }
      consumers_done.fetch_add(1);
    });
  }
  ready.arrive_and_wait();
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point window_end) {
    end = window_end;
    go.count_down();
    for (auto& p : producer_threads) p.join();
  });
  const double window_s = o.seconds;  // the rates' window: go to end
  std::int64_t total_offered = 0, pairs = 0;
  for (auto n : offered) total_offered += n;
  for (auto n : in_window) pairs += n;

  // Drain: one stop element per consumer, after every element offered.
  const auto drain_start = clock::now();
  for (int c = 0; c < consumers; ++c) queue.offer(stop_element);
  join_or_cancel(consumer_threads, consumers_done, end + 30s, stop);
  const double drain_s = std::chrono::duration<double>(clock::now() - drain_start).count();

  std::vector<std::uint64_t> all;
  std::int64_t failed = 0, odd = 0, cancels = 0;
  for (int c = 0; c < consumers; ++c) {
    all.insert(all.end(), got[c].begin(), got[c].end());
    odd += foreign[c];
    cancels += cancelled[c];
  }
  for (auto n : errors) failed += n;
  std::sort(all.begin(), all.end());
  std::int64_t duplicates = 0, unknown = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i] == all[i - 1]) {
      ++duplicates;
      continue;
    }
    const auto t = all[i] >> 40;
    const auto seq = static_cast<std::int64_t>(all[i] & ((1ull << 40) - 1));
    if (t >= static_cast<std::uint64_t>(producers) || seq >= offered[t]) ++unknown;
  }
  const auto distinct = static_cast<std::int64_t>(all.size()) - duplicates - unknown;
  const std::int64_t left = queue.size();
  queue.clear();

  samples offers;
  for (auto& s : offer_time) offers.merge(s);
  result r = make_result(o);
  r.set("pairs_per_s", static_cast<double>(pairs) / window_s)
      .set("offers_per_s", static_cast<double>(total_offered) / window_s)
      .set("pairs", pairs)
      .set("offered", total_offered)
      .set("taken", static_cast<std::int64_t>(all.size()))
      .set("backlog", total_offered - pairs)
      .set("lost", total_offered - distinct)
      .set("duplicates", duplicates)
      .set("unknown", unknown + odd)
      .set("left", left)
      .set("offer_p50_us", offers.percentile_us(0.50))
      .set("offer_p99_us", offers.percentile_us(0.99))
      .set("drain_s", drain_s)
      .set("producers", static_cast<std::int64_t>(producers))
      .set("consumers", static_cast<std::int64_t>(consumers))
      .set("cancelled", cancels)
      .set("errors", failed);
  add_common(r, o, window, cpu, server, pairs);
  return r;
}

result run_queue_delayed(const options& o) {
  constexpr int rate = 1'000;                // elements per second
  constexpr std::int64_t max_delay = 2'000;  // ms; delays in [0, max_delay]
  relock::client client(client_settings(o));

  // Warm-up, on a destination of its own: the scripts loaded, the transfer's subscription and
  // the consumer's connection made.
  {
    auto warm_delayed = client.delayed_queue("bench:queue-delayed:warmup");
    auto warm = client.blocking_queue("bench:queue-delayed:warmup");
    for (int i = 0; i < 100; ++i) warm_delayed.offer("w", 0ms);
    for (int i = 0; i < 100; ++i) warm.take();
    warm_delayed.destroy();
    warm_delayed.clear();
    warm.clear();
  }

  auto delayed = client.delayed_queue("bench:queue-delayed");
  auto destination = client.blocking_queue("bench:queue-delayed");
  delayed.clear();
  destination.clear();
  server_probe probe(o.probe());

  const auto max_elements = static_cast<std::int64_t>(o.seconds * rate) + 1;
  std::vector<int> seen(static_cast<std::size_t>(max_elements), 0);
  samples lateness, offer_time;
  lateness.reserve(static_cast<std::size_t>(max_elements));
  offer_time.reserve(static_cast<std::size_t>(max_elements));
  std::atomic<std::int64_t> offered{-1};  // set once the producer has stopped
  std::atomic<std::int64_t> arrived{0};
  std::int64_t early = 0, unknown = 0, take_errors = 0, offer_errors = 0;
  std::int64_t early_max_us = 0;
  std::stop_source stop;
  std::atomic<int> consumer_done{0};
  std::latch ready(2);

  std::vector<std::thread> consumer;
  consumer.emplace_back([&] {
    ready.count_down();
    for (;;) {
      std::string v;
      try {
        v = destination.take(stop.get_token());
      } catch (const relock::error& e) {
        if (e.code() == relock::errc::cancelled) break;  // every element came, or the end
        ++take_errors;
        continue;
      }
      const auto now_us = wall_us();
      const auto colon = v.find(':');
      std::int64_t index = -1, due_ms = 0;
      try {
        if (colon != std::string::npos) {
          index = std::stoll(v.substr(0, colon));
          due_ms = std::stoll(v.substr(colon + 1));
        }
      } catch (const std::exception&) {
        index = -1;
      }
      if (index < 0 || index >= max_elements) {
        ++unknown;
        continue;
      }
      const auto late_us = now_us - due_ms * 1000;
      if (late_us < 0) {
        ++early;
        early_max_us = std::max(early_max_us, -late_us);
      }
      if (seen[static_cast<std::size_t>(index)]++ == 0) {
        lateness.add(std::chrono::microseconds(late_us));
        arrived.fetch_add(1);
      }
    }
    consumer_done.fetch_add(1);
  });
  ready.arrive_and_wait();

  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point end) {
    const auto t0 = clock::now();
    std::int64_t i = 0;
    for (; i < max_elements; ++i) {
      const auto at = t0 + std::chrono::microseconds(i * 1'000'000 / rate);
      if (at >= end) break;
      std::this_thread::sleep_until(at);
      const auto delay = static_cast<std::int64_t>(
          splitmix64(static_cast<std::uint64_t>(o.rep) << 32 | static_cast<std::uint64_t>(i)) %
          static_cast<std::uint64_t>(max_delay + 1));
      const auto due_ms = wall_us() / 1000 + delay;
      const auto before = clock::now();
      try {
        delayed.offer(std::to_string(i) + ":" + std::to_string(due_ms),
                      std::chrono::milliseconds(delay));
      } catch (const relock::error&) {
        ++offer_errors;  // counted as lost too: it never comes
      }
      offer_time.add(clock::now() - before);
    }
    offered.store(i);
    const auto last_due = clock::now() + std::chrono::milliseconds(max_delay);
    // Until every element has come, or 5 s after the last one came due.
    while (arrived.load() < i && clock::now() < last_due + 5s) std::this_thread::sleep_for(1ms);
  });
  join_or_cancel(consumer, consumer_done, clock::now(), stop);

  const auto n = offered.load();
  std::int64_t lost = 0, duplicates = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const int k = seen[static_cast<std::size_t>(i)];
    if (k == 0) ++lost;
    if (k > 1) duplicates += k - 1;
  }
  const std::int64_t left_delayed = delayed.size();
  const std::int64_t left_destination = destination.size();
  delayed.clear();
  destination.clear();

  result r = make_result(o);
  r.set("lateness_p50_ms", lateness.percentile_us(0.50) / 1000)
      .set("lateness_p99_ms", lateness.percentile_us(0.99) / 1000)
      .set("lateness_max_ms", lateness.max_us() / 1000)
      .set("lateness_min_ms", lateness.percentile_us(0.0) / 1000)
      .set("offered", n)
      .set("offers_per_s", static_cast<double>(n) / o.seconds)
      .set("delivered", static_cast<std::int64_t>(lateness.count()))
      .set("early", early)
      .set("early_max_ms", static_cast<double>(early_max_us) / 1000)
      .set("lost", lost)
      .set("duplicates", duplicates)
      .set("unknown", unknown)
      .set("left_delayed", left_delayed)
      .set("left_destination", left_destination)
      .set("offer_p50_us", offer_time.percentile_us(0.50))
      .set("offer_p99_us", offer_time.percentile_us(0.99))
      .set("max_delay_ms", max_delay)
      .set("rate", static_cast<std::int64_t>(rate))
      .set("errors", offer_errors + take_errors);
  add_common(r, o, window, cpu, server, n);
  return r;
}

}  // namespace relock_bench
