// SPDX-License-Identifier: Apache-2.0
// semaphore (Redisson's RSemaphore) on a real server: a string of available permits and the new
// count on redisson_sc:{name}. Holders in two processes never exceed the permits; a release of n
// wakes n waiters' worth by message; a waiter for several permits is woken when they are free
// (redisson/redisson#6664); a name holding nothing is not_initialized (#4401) unless the handle
// waits for it; try_set_permits leaves a drained 0 alone (#4678); async, stops and bad input.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <asio/use_future.hpp>
#include <atomic>
#include <cstdint>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_process.hpp"
#include "support/expect_messages.hpp"
#include "support/lock_env.hpp"
#include "support/raw_subscriber.hpp"

namespace semaphore_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

// CLOCK_MONOTONIC is one clock for every process of the machine: hold intervals logged by two
// processes compare directly.
std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string channel_of(const std::string& name) { return "redisson_sc:{" + name + "}"; }

// True once `n` clients are subscribed to `channel` (each relock client subscribes once for all
// its waiters), within 5 s.
bool subscribers_reach(raw_client& raw, const std::string& channel, long long n) {
  return wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= n;
      },
      5s);
}

// The most intervals covering one instant. Starts sort before ends at the same instant, so
// intervals that only touch count as overlapping (a hand-over makes the next start strictly
// later than the previous end: the end is logged before the release, the start after the
// acquire).
int max_overlap(const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals) {
  std::vector<std::pair<std::int64_t, int>> events;
  for (const auto& [start, end] : intervals) {
    events.emplace_back(start, 0);  // 0 sorts first: a start
    events.emplace_back(end, 1);
  }
  std::sort(events.begin(), events.end());
  int now = 0, most = 0;
  for (const auto& [at, kind] : events) {
    now += kind == 0 ? 1 : -1;
    most = std::max(most, now);
  }
  return most;
}

// A waiter on its own thread, with a wait long enough for any healthy test and short enough that
// a failing one ends: records whether and when it got its permits.
struct timed_waiter {
  std::atomic<bool> done{false};
  std::atomic<bool> got{false};
  steady::time_point at{};
  std::thread thread;

  void start(relock::semaphore& sem, std::int64_t permits) {
    thread = std::thread([this, &sem, permits] {
      const bool ok = sem.try_acquire(permits, 15s);
      at = steady::now();
      got = ok;
      done = true;
    });
  }
  ~timed_waiter() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

// 3 permits, 10 threads in 2 processes, 30 holds each: each holder logs its hold [start, end] on
// CLOCK_MONOTONIC inside its hold; no instant is covered by more than 3 holds, and every waiter
// got every permit it asked for.
TEST(semaphore, three_permits_never_have_more_than_three_holders_across_two_processes) {
  redis_server server;
  constexpr int threads_each = 5, holds_each = 30;
  raw_client::to(server).command({"SET", "sem", "3"});  // before the fork: no client, no thread

  // Each thread: acquire, log the start, hold 2 ms, log the end, release; then push "start end"
  // to the list "holds". A wait that runs out (30 s) counts as a failure: a starved waiter.
  auto work = [&server](relock::client& c) {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_each; ++t) {
      threads.emplace_back([&] {
        try {
          auto raw = raw_client::to(server);
          auto sem = c.semaphore("sem");
          for (int i = 0; i < holds_each; ++i) {
            if (!sem.try_acquire(1, 30s)) {
              ++failures;
              return;
            }
            const std::int64_t start = mono_ns();
            std::this_thread::sleep_for(2ms);  // the critical section
            const std::int64_t end = mono_ns();
            sem.release(1);
            raw.command({"RPUSH", "holds", std::to_string(start) + " " + std::to_string(end)});
          }
        } catch (...) {
          ++failures;
        }
      });
    }
    for (auto& t : threads) t.join();
    return failures.load();
  };

  const pid_t child = fork_child([&] {
    relock::client c(settings_for(server));
    return work(c) == 0 ? 0 : 1;
  });
  ASSERT_GT(child, 0);

  const auto started = steady::now();
  int failures = 0;
  {
    relock::client client(settings_for(server));
    failures = work(client);
  }
  expect_children_succeed({child});
  EXPECT_EQ(failures, 0) << "a waiter of this process was not served";
  const auto took = steady::now() - started;

  auto raw = raw_client::to(server);
  std::vector<std::pair<std::int64_t, std::int64_t>> holds;
  for (const auto& e : raw.command({"LRANGE", "holds", "0", "-1"}).elements) {
    const auto space = e.str.find(' ');
    holds.emplace_back(std::stoll(e.str.substr(0, space)), std::stoll(e.str.substr(space + 1)));
  }
  EXPECT_EQ(holds.size(), std::size_t{2 * threads_each * holds_each});
  const int most = max_overlap(holds);
  EXPECT_LE(most, 3);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "3") << "every permit came back";
  std::cout << holds.size() << " holds in " << (took / 1ms) << " ms, at most " << most << " at once"
            << std::endl;
}

// Three waiters for 1 permit each, one client apiece (so each is seen subscribed): release(2)
// lets exactly two through within 300 ms (by message: the periodic look is once a second); the
// third waits on until release(1).
TEST(semaphore, a_release_of_two_wakes_two_of_three_waiters_in_three_clients) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client releaser(settings_for(server));
  auto sem = releaser.semaphore("sem");
  ASSERT_TRUE(sem.try_set_permits(0));
  std::vector<std::unique_ptr<relock::client>> clients;
  std::vector<relock::semaphore> handles;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<relock::client>(settings_for(server)));
    handles.push_back(clients.back()->semaphore("sem"));
  }
  timed_waiter waiters[3];
  for (int i = 0; i < 3; ++i) waiters[i].start(handles[i], 1);
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 3));

  const auto released = steady::now();
  sem.release(2);
  auto count_done = [&] {
    int n = 0;
    for (auto& w : waiters) n += w.done ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return count_done() >= 2; }, 5s));
  for (auto& w : waiters) {
    if (!w.done) continue;
    EXPECT_TRUE(w.got);
    EXPECT_LT(w.at - released, 300ms);
    std::cout << "woken " << (w.at - released) / 1ms << " ms after release(2)" << std::endl;
  }
  EXPECT_EQ(count_done(), 2);
  EXPECT_EQ(sem.available_permits(), 0);

  const auto released_last = steady::now();
  sem.release(1);
  ASSERT_TRUE(wait_until([&] { return count_done() == 3; }, 5s));
  for (auto& w : waiters) EXPECT_TRUE(w.got);
  const auto last = std::max({waiters[0].at, waiters[1].at, waiters[2].at});
  EXPECT_LT(last - released_last, 300ms);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");
}

// The same with the three waiters on one client: a message of count 2 wakes two local waiters.
TEST(semaphore, a_release_of_two_wakes_two_of_three_waiters_in_one_client) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), releaser(settings_for(server));
  auto sem = client.semaphore("sem");
  auto other = releaser.semaphore("sem");
  ASSERT_TRUE(other.try_set_permits(0));
  timed_waiter waiters[3];
  for (auto& w : waiters) w.start(sem, 1);
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));

  const auto released = steady::now();
  other.release(2);
  auto count_done = [&] {
    int n = 0;
    for (auto& w : waiters) n += w.done ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return count_done() >= 2; }, 5s));
  for (auto& w : waiters) {
    if (!w.done) continue;
    EXPECT_TRUE(w.got);
    EXPECT_LT(w.at - released, 300ms);
    std::cout << "woken " << (w.at - released) / 1ms << " ms after release(2)" << std::endl;
  }
  EXPECT_EQ(count_done(), 2);
  EXPECT_EQ(other.available_permits(), 0);

  const auto released_last = steady::now();
  other.release(1);
  ASSERT_TRUE(wait_until([&] { return count_done() == 3; }, 5s));
  for (auto& w : waiters) EXPECT_TRUE(w.got);
  const auto last = std::max({waiters[0].at, waiters[1].at, waiters[2].at});
  EXPECT_LT(last - released_last, 300ms);
}

// redisson/redisson#6664: a waiter for 3 permits is woken once 3 are free, by the release that
// frees the third, not at the end of its wait; and with a waiter for 1 beside it, a release of 3
// serves one of them at once and the next release serves the other at once.
TEST(semaphore, a_waiter_for_three_permits_is_woken_when_three_are_free) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), releaser(settings_for(server));
  auto sem = client.semaphore("sem");
  auto other = releaser.semaphore("sem");
  ASSERT_TRUE(other.try_set_permits(0));

  {
    timed_waiter big;
    big.start(sem, 3);
    ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));
    other.release(1);
    other.release(1);  // counts of 1 and 2: not enough for it
    EXPECT_EQ(other.available_permits(), 2);
    EXPECT_FALSE(big.done);
    const auto released = steady::now();
    other.release(1);
    ASSERT_TRUE(wait_until([&] { return big.done.load(); }, 5s));
    EXPECT_TRUE(big.got);
    EXPECT_LT(big.at - released, 300ms);
    std::cout << "the waiter for 3 got them " << (big.at - released) / 1ms
              << " ms after the third release" << std::endl;
    EXPECT_EQ(other.available_permits(), 0);
  }

  // A waiter for 3 and one for 1; whichever the release of 3 serves first, the other is served
  // at once by the next release (of 1: the count is then 3 for the big one, or 1 for the small).
  timed_waiter big, small;
  big.start(sem, 3);
  small.start(sem, 1);
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));
  auto released = steady::now();
  other.release(3);
  ASSERT_TRUE(wait_until([&] { return big.done || small.done; }, 5s));
  timed_waiter& first = big.done ? big : small;
  timed_waiter& second = big.done ? small : big;
  EXPECT_TRUE(first.got);
  EXPECT_LT(first.at - released, 300ms);
  EXPECT_FALSE(second.done) << "3 permits cannot serve both";
  EXPECT_EQ(other.available_permits(), big.done ? 0 : 2);
  released = steady::now();
  other.release(1);
  ASSERT_TRUE(wait_until([&] { return second.done.load(); }, 5s));
  EXPECT_TRUE(second.got);
  EXPECT_LT(second.at - released, 300ms);
  std::cout << (&first == &big ? "the waiter for 3" : "the waiter for 1")
            << " was served first; the other " << (second.at - released) / 1ms
            << " ms after the next release" << std::endl;
  EXPECT_EQ(other.available_permits(), 0);
}

// redisson/redisson#4401: a name holding nothing is not a semaphore with 0 permits. Acquiring
// fails at once with not_initialized and writes nothing; a handle made with wait_when_absent
// waits instead, and gets its permit when someone adds one.
TEST(semaphore, acquiring_from_a_name_holding_nothing_is_not_initialized_unless_asked_to_wait) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), adder(settings_for(server));
  auto sem = client.semaphore("absent");
  EXPECT_EQ(error_of([&] { sem.acquire(); }), errc::not_initialized);
  EXPECT_EQ(error_of([&] { sem.try_acquire(); }), errc::not_initialized);
  const auto started = steady::now();
  EXPECT_EQ(error_of([&] { sem.try_acquire(1, 5s); }), errc::not_initialized);
  EXPECT_LT(steady::now() - started, 1s) << "it waited instead of failing";
  EXPECT_EQ(async_error_of<bool>([&](auto h) { sem.async_acquire(2, 5s, {}, h); }),
            errc::not_initialized);
  EXPECT_EQ(raw.command({"EXISTS", "absent"}).integer, 0);
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(raw.command({"EXISTS", "absent"}).integer, 0);

  auto waiting = client.semaphore("absent", {.wait_when_absent = true});
  timed_waiter w;
  w.start(waiting, 1);
  ASSERT_TRUE(subscribers_reach(raw, channel_of("absent"), 1));
  EXPECT_FALSE(w.done);
  EXPECT_EQ(raw.command({"EXISTS", "absent"}).integer, 0);
  const auto added = steady::now();
  adder.semaphore("absent").add_permits(1);
  ASSERT_TRUE(wait_until([&] { return w.done.load(); }, 5s));
  EXPECT_TRUE(w.got);
  EXPECT_LT(w.at - added, 300ms);
  std::cout << "the waiter for an absent semaphore got the added permit " << (w.at - added) / 1ms
            << " ms after add_permits" << std::endl;
  EXPECT_EQ(raw.command({"GET", "absent"}).str, "0");
}

// redisson/redisson#4678: a semaphore drained to 0 still exists; try_set_permits leaves it at 0.
TEST(semaphore, try_set_permits_on_a_drained_semaphore_is_false_and_leaves_zero) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.semaphore("sem");
  EXPECT_TRUE(sem.try_set_permits(2));
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "2");
  EXPECT_FALSE(sem.try_set_permits(7));
  EXPECT_EQ(sem.drain_permits(), 2);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");
  EXPECT_FALSE(sem.try_set_permits(5));
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_FALSE(sem.try_acquire());
}

// add_permits (also negative, and on an absent name), drain_permits, available_permits, and the
// count a release publishes on redisson_sc:{name}.
TEST(semaphore, add_drain_available_and_the_count_a_release_publishes) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.semaphore("sem");
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(sem.drain_permits(), 0);
  EXPECT_EQ(raw.command({"EXISTS", "sem"}).integer, 0) << "reading and draining wrote nothing";
  sem.add_permits(5);  // creates it
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "5");
  EXPECT_EQ(sem.available_permits(), 5);
  sem.add_permits(-7);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "-2");
  EXPECT_EQ(sem.available_permits(), -2);
  EXPECT_FALSE(sem.try_acquire());

  raw_subscriber sub(server, channel_of("sem"));
  sem.release(3);
  EXPECT_EQ(sem.available_permits(), 1);
  sem.release(2);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "3");
  expect_messages(raw, sub, channel_of("sem"), {"1", "3"});

  EXPECT_TRUE(sem.try_acquire(2));
  EXPECT_FALSE(sem.try_acquire(2));
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(sem.drain_permits(), 1);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");
  EXPECT_EQ(sem.drain_permits(), 0);
}

// async_acquire with a callback and with asio::use_future; a zero wait tries once.
TEST(semaphore, async_acquire_with_a_callback_and_with_a_future) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.semaphore("sem");
  ASSERT_TRUE(sem.try_set_permits(1));

  std::promise<std::pair<std::error_code, bool>> called;
  sem.async_acquire(1, std::nullopt, {}, [&](std::error_code ec, bool got) {
    called.set_value({ec, got});
  });
  auto f = called.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  const auto [ec, got] = f.get();
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(got);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");

  EXPECT_FALSE(sem.async_acquire(1, 0ms, {}, asio::use_future).get());
  auto waiting = sem.async_acquire(2, 10s, {}, asio::use_future);
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));
  EXPECT_EQ(waiting.wait_for(0ms), std::future_status::timeout);
  sem.async_release(2, asio::use_future).get();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "0");

  std::promise<std::error_code> released;
  sem.async_release(3, [&](std::error_code e) { released.set_value(e); });
  auto r = released.get_future();
  ASSERT_EQ(r.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(r.get());
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "3");
}

// A stop request ends a waiting acquire with errc::cancelled, sync and async, taking nothing.
TEST(semaphore, a_stop_request_cancels_a_waiting_acquire_and_takes_nothing) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.semaphore("sem");
  ASSERT_TRUE(sem.try_set_permits(1));

  std::stop_source stop;
  auto waiting = std::async(std::launch::async,
                            [&] { return error_of([&] { sem.acquire(2, stop.get_token()); }); });
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));
  EXPECT_EQ(waiting.wait_for(0ms), std::future_status::timeout);
  stop.request_stop();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), errc::cancelled);

  std::stop_source async_stop;
  auto async_waiting = async_error<bool>(
      [&](auto h) { sem.async_acquire(2, std::nullopt, async_stop.get_token(), h); });
  ASSERT_TRUE(subscribers_reach(raw, channel_of("sem"), 1));
  async_stop.request_stop();
  ASSERT_EQ(async_waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(async_waiting.get(), errc::cancelled);

  EXPECT_EQ(raw.command({"GET", "sem"}).str, "1");
  EXPECT_TRUE(sem.try_acquire(1));  // the stopped waiters left the permit for others
}

// Counts below 1 and negative waits are refused before any I/O; a name holding a hash is
// wrong_type for every call, and the hash stays as it was.
TEST(semaphore, bad_input_is_refused_and_changes_nothing) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  EXPECT_EQ(error_of([&] { client.semaphore(""); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { client.semaphore(std::string(64 * 1024 + 1, 'n')); }),
            errc::invalid_argument);

  auto sem = client.semaphore("sem");
  ASSERT_TRUE(sem.try_set_permits(2));
  for (std::int64_t bad : {0, -1}) {
    EXPECT_EQ(error_of([&] { sem.acquire(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { sem.try_acquire(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { sem.try_acquire(bad, 1s); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { sem.release(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(async_error_of<bool>([&](auto h) { sem.async_acquire(bad, 1s, {}, h); }),
              errc::invalid_argument)
        << bad;
    EXPECT_EQ(async_error_of<>([&](auto h) { sem.async_release(bad, h); }), errc::invalid_argument)
        << bad;
  }
  EXPECT_EQ(error_of([&] { sem.try_acquire(1, -1ms); }), errc::invalid_argument);
  EXPECT_EQ(async_error_of<bool>([&](auto h) { sem.async_acquire(1, -1ms, {}, h); }),
            errc::invalid_argument);
  EXPECT_EQ(raw.command({"GET", "sem"}).str, "2");

  raw.command({"HSET", "hashed", "field", "value"});
  auto typed = client.semaphore("hashed");
  EXPECT_EQ(error_of([&] { typed.acquire(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.try_acquire(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.try_acquire(1, 1s); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.release(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.available_permits(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.drain_permits(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.try_set_permits(3); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.add_permits(3); }), errc::wrong_type);
  EXPECT_EQ(async_error_of<bool>([&](auto h) { typed.async_acquire(1, 1s, {}, h); }),
            errc::wrong_type);
  auto waiting_typed = client.semaphore("hashed", {.wait_when_absent = true});
  EXPECT_EQ(error_of([&] { waiting_typed.try_acquire(1, 1s); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"TYPE", "hashed"}).str, "hash");
  const auto fields = raw.command({"HGETALL", "hashed"});
  ASSERT_EQ(fields.elements.size(), 2u);
  EXPECT_EQ(fields.elements[0].str, "field");
  EXPECT_EQ(fields.elements[1].str, "value");

  raw.command({"SET", "texted", "not a number"});
  EXPECT_EQ(error_of([&] { client.semaphore("texted").try_acquire(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { client.semaphore("texted").release(); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"GET", "texted"}).str, "not a number");
}

}  // namespace semaphore_test
