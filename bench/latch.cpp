// SPDX-License-Identifier: Apache-2.0
// latch: how fast a count-down latch opens for its awaiters (Redisson's RCountDownLatch data:
// count_down deletes the name at zero and publishes 0 on
// redisson_countdownlatch__channel__{name}). T awaiter threads (8) and a coordinator share one
// client. Each round:
//  1. the coordinator sets the count to 1 (try_set_count; the previous round left the latch
//     open), then lets the awaiters go;
//  2. each awaiter counts itself in and calls await();
//  3. once all T have counted themselves in, the coordinator polls PUBSUB NUMSUB on the latch's
//     channel (a plain hiredis connection of its own) until the server lists a subscriber
//     (setup: from the last awaiter's call to that moment), then idles `margin` (5 ms) more, so
//     every awaiter has subscribed and read the count (one round trip after subscribing, ~70 us
//     here) before the latch opens: the margin is ~70 of those, and `setup` shows how long the
//     subscription itself took in every round;
//  4. the coordinator notes the clock and calls count_down(); each awaiter notes the clock as
//     its await() returns. wake = that minus the clock before count_down (over every awaiter and
//     round); all_open = the last awaiter's wake in a round.
// Checks: an await() that returned before count_down was called (`early`; 0 expected: the latch
// was not closed), a wake over 100 ms (`late`: a missed message, caught by a later look at the
// count), a round whose awaiters were not all back 3 s after count_down (`stuck`: the rounds end
// there, every await is cancelled), try_set_count finding the latch closed (`set_failed`).
// The rounds run until the window ends; 50 rounds on a name of their own warm up first.
//
// latch-ceiling (bench/run's ceiling for latch, not a library scenario): the same rounds with
// plain hiredis connections, T subscriber threads each blocking on its own connection
// SUBSCRIBEd to one channel, and the coordinator PUBLISHing on another after the same margin:
// how fast Redis itself and this machine's thread wake-ups let a message reach T waiting
// threads.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <hiredis/hiredis.h>
#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

using namespace std::chrono_literals;

constexpr auto margin = 5ms;         // idle after the subscription is seen, before opening
constexpr auto late_wake = 100ms;    // a wake slower than this missed the message
constexpr auto round_deadline = 3s;  // after count_down, for every awaiter to be back
constexpr auto setup_deadline = 1s;  // for the server to list the subscription
constexpr std::int64_t max_rounds = 100'000;
constexpr int warmup_rounds = 50;

// A plain blocking hiredis connection to the first host:port of a redis:// URL, 5 s timeouts.
class raw_connection {
 public:
  explicit raw_connection(const std::string& url) {
    std::string rest = url;
    if (auto p = rest.find("://"); p != std::string::npos) rest = rest.substr(p + 3);
    if (auto p = rest.rfind('@'); p != std::string::npos) rest = rest.substr(p + 1);
    if (auto p = rest.find_first_of("/?,"); p != std::string::npos) rest = rest.substr(0, p);
    int port = 6379;
    if (auto p = rest.rfind(':'); p != std::string::npos) {
      port = std::stoi(rest.substr(p + 1));
      rest = rest.substr(0, p);
    }
    const timeval timeout{5, 0};
    c_ = redisConnectWithTimeout(rest.c_str(), port, timeout);
    if (c_ == nullptr || c_->err) {
      std::string why = c_ ? c_->errstr : "out of memory";
      if (c_) redisFree(c_);
      throw std::runtime_error("cannot connect to " + url + ": " + why);
    }
    redisSetTimeout(c_, timeout);
  }
  ~raw_connection() { redisFree(c_); }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  using reply = std::unique_ptr<redisReply, void (*)(void*)>;

  // One command, its reply checked (a lost connection or an error reply throws).
  reply command(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    return checked(redisCommandArgv(c_, static_cast<int>(args.size()), argv.data(), lens.data()),
                   args.front());
  }
  // The next reply (a subscribed connection's next message).
  reply next() {
    void* r = nullptr;
    if (redisGetReply(c_, &r) != REDIS_OK) r = nullptr;
    return checked(r, "a message");
  }

 private:
  reply checked(void* raw, const std::string& what) {
    reply r(static_cast<redisReply*>(raw), freeReplyObject);
    if (!r) throw std::runtime_error(what + ": " + c_->errstr);
    if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error(what + ": " + std::string(r->str));
    return r;
  }
  redisContext* c_ = nullptr;
};

// PUBSUB NUMSUB channel: the subscribers the server lists.
std::int64_t numsub(raw_connection& c, const std::string& channel) {
  auto r = c.command({"PUBSUB", "NUMSUB", channel});
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) throw std::runtime_error("PUBSUB NUMSUB");
  return r->element[1]->integer;
}

std::int64_t ticks(clock::time_point t) { return t.time_since_epoch().count(); }

// What the rounds differ in, latch or raw pub/sub.
struct round_kind {
  std::function<bool()> arm;  // before the awaiters go; false: the latch was still closed
  std::function<void(int awaiter, std::stop_token)> await;  // returns once the latch opened
  std::function<bool()> subscribed;                         // the server lists the subscription
  std::function<void()> open;                               // count_down / PUBLISH
};

struct round_figures {
  samples wake, all_open, open_call, setup;
  std::int64_t rounds = 0, early = 0, late = 0, stuck = 0, unsubscribed = 0, set_failed = 0,
               errors = 0, cancelled = 0, polls = 0;
};

// Rounds (see the top of this file) until `end` or `rounds_wanted`, with `awaiters` threads.
round_figures run_rounds(int awaiters, clock::time_point end, std::int64_t rounds_wanted,
                         const round_kind& kind) {
  round_figures f;
  std::atomic<std::int64_t> round{0};  // the round the awaiters may start; -1: stop
  std::mutex m;
  std::condition_variable cv;
  std::int64_t called = 0, returned = 0;  // under m
  std::vector<std::atomic<std::int64_t>> returned_at(awaiters);
  std::atomic<std::int64_t> errors{0}, cancelled{0};
  std::stop_source stop;
  std::vector<std::thread> threads;
  for (int t = 0; t < awaiters; ++t) {
    threads.emplace_back([&, t] {
      for (std::int64_t r = 1;; ++r) {
        for (auto now = round.load(); now >= 0 && now < r; now = round.load()) round.wait(now);
        if (round.load() < 0) return;
        {
          std::lock_guard g(m);
          if (++called == awaiters * r) cv.notify_all();
        }
        bool gone = false;
        try {
          kind.await(t, stop.get_token());
        } catch (const relock::error& e) {
          if (e.code() == relock::errc::cancelled) {
            ++cancelled;
            gone = true;
          } else {
            ++errors;
          }
        } catch (const std::exception&) {
          ++errors;
        }
        returned_at[t].store(ticks(clock::now()));
        {
          std::lock_guard g(m);
          if (++returned == awaiters * r) cv.notify_all();
        }
        if (gone) return;
      }
    });
  }

  std::vector<std::int64_t> wake(awaiters);
  for (std::int64_t r = 1; r <= rounds_wanted && clock::now() < end; ++r) {
    if (!kind.arm()) ++f.set_failed;
    round.store(r);
    round.notify_all();
    {
      std::unique_lock lk(m);
      if (!cv.wait_until(lk, clock::now() + round_deadline,
                         [&] { return called >= awaiters * r; })) {
        ++f.stuck;
        break;
      }
    }
    const auto all_called = clock::now();
    bool seen = false;
    while (clock::now() < all_called + setup_deadline) {
      ++f.polls;
      if ((seen = kind.subscribed())) break;
    }
    if (seen)
      f.setup.add(clock::now() - all_called);
    else
      ++f.unsubscribed;
    std::this_thread::sleep_for(margin);
    const auto opened = clock::now();
    kind.open();
    f.open_call.add(clock::now() - opened);
    {
      std::unique_lock lk(m);
      if (!cv.wait_until(lk, opened + round_deadline, [&] { return returned >= awaiters * r; })) {
        ++f.stuck;
        break;
      }
    }
    ++f.rounds;
    std::int64_t last = 0;
    for (int t = 0; t < awaiters; ++t) {
      const auto d = returned_at[t].load() - ticks(opened);
      if (d < 0) {
        ++f.early;
        continue;
      }
      f.wake.add(clock::duration(d));
      if (clock::duration(d) > late_wake) ++f.late;
      last = std::max(last, d);
    }
    f.all_open.add(clock::duration(last));
  }
  round.store(-1);
  round.notify_all();
  if (f.stuck) stop.request_stop();  // cancels any await still waiting
  for (auto& t : threads) t.join();
  f.errors = errors.load();
  f.cancelled = cancelled.load();
  return f;
}

void add_rounds(result& r, round_figures& f, int awaiters) {
  r.set("wake_p50_us", f.wake.percentile_us(0.50))
      .set("wake_p99_us", f.wake.percentile_us(0.99))
      .set("wake_max_us", f.wake.max_us())
      .set("all_open_p50_us", f.all_open.percentile_us(0.50))
      .set("all_open_p99_us", f.all_open.percentile_us(0.99))
      .set("open_call_p50_us", f.open_call.percentile_us(0.50))
      .set("open_call_p99_us", f.open_call.percentile_us(0.99))
      .set("setup_p50_us", f.setup.percentile_us(0.50))
      .set("setup_p99_us", f.setup.percentile_us(0.99))
      .set("setup_max_us", f.setup.max_us())
      .set("margin_us", static_cast<std::int64_t>(
                            std::chrono::duration_cast<std::chrono::microseconds>(margin).count()))
      .set("awaiters", static_cast<std::int64_t>(awaiters))
      .set("rounds", f.rounds)
      .set("wakeups", static_cast<std::int64_t>(f.wake.count()))
      .set("early", f.early)
      .set("late", f.late)
      .set("stuck", f.stuck)
      .set("unsubscribed", f.unsubscribed)
      .set("set_failed", f.set_failed)
      .set("numsub_polls", f.polls)
      .set("cancelled", f.cancelled)
      .set("errors", f.errors);
}

}  // namespace

result run_latch(const options& o) {
  relock::client client(client_settings(o));
  const int awaiters = o.threads;
  raw_connection watch(o.probe());

  auto rounds_on = [&](const std::string& name, clock::time_point end, std::int64_t wanted) {
    auto coordinator = client.count_down_latch(name);
    coordinator.delete_latch();
    std::vector<relock::count_down_latch> latches;
    for (int t = 0; t < awaiters; ++t) latches.push_back(client.count_down_latch(name));
    const std::string channel = "redisson_countdownlatch__channel__{" + coordinator.key() + "}";
    round_kind kind{
        [&] { return coordinator.try_set_count(1); },
        [&](int t, std::stop_token stop) { latches[static_cast<std::size_t>(t)].await(stop); },
        [&] { return numsub(watch, channel) >= 1; },
        [&] { coordinator.count_down(); },
    };
    return run_rounds(awaiters, end, wanted, kind);
  };

  rounds_on("bench:latch:warmup", clock::time_point::max(), warmup_rounds);

  server_probe probe(o.probe());
  round_figures f;
  const auto [window, cpu, server] = run_window(
      o, probe, [&](clock::time_point end) { f = rounds_on("bench:latch", end, max_rounds); });
  result r = make_result(o);
  add_rounds(r, f, awaiters);
  // The commands the library sent per round: all the server counted, less our own NUMSUB polls.
  r.set("lib_calls_per_round",
        f.rounds > 0 ? static_cast<double>(server.calls - f.polls) / static_cast<double>(f.rounds)
                     : std::nan(""));
  add_common(r, o, window, cpu, server, f.rounds);
  return r;
}

result run_latch_ceiling(const options& o) {
  const int awaiters = o.threads;
  const std::string channel = "bench:latch-ceiling";
  std::vector<std::unique_ptr<raw_connection>> subscribers;
  for (int t = 0; t < awaiters; ++t) {
    subscribers.push_back(std::make_unique<raw_connection>(o.url));
    subscribers.back()->command({"SUBSCRIBE", channel});
  }
  raw_connection publisher(o.url);
  std::atomic<std::int64_t> short_publishes{0};
  round_kind kind{
      [] { return true; },
      [&](int t, std::stop_token) {
        auto m = subscribers[static_cast<std::size_t>(t)]->next();
        if (m->type != REDIS_REPLY_ARRAY || m->elements != 3) {
          throw std::runtime_error("not a message");
        }
      },
      [] { return true; },  // subscribed before the rounds
      [&] {
        auto n = publisher.command({"PUBLISH", channel, "0"});
        if (n->integer != awaiters) ++short_publishes;
      },
  };
  run_rounds(awaiters, clock::time_point::max(), 10, kind);  // warm-up

  server_probe probe(o.probe());
  round_figures f;
  const auto [window, cpu, server] = run_window(
      o, probe, [&](clock::time_point end) { f = run_rounds(awaiters, end, max_rounds, kind); });
  result r = make_result(o);
  add_rounds(r, f, awaiters);
  r.set("short_publishes", short_publishes.load());
  add_common(r, o, window, cpu, server, f.rounds);
  return r;
}

}  // namespace relock_bench
