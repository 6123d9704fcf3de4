// SPDX-License-Identifier: Apache-2.0
// What the interop tests share besides their fixtures (redisson_fixture.hpp on one server,
// redisson_cluster_fixture.hpp on the shared cluster): driver replies timed on relock's clock,
// relock owners other than the test thread acquiring through the async API, and waiters that
// must be woken by a release message rather than by the holder's TTL.
//
// A driver reply's start_ns/end_ns are Java's System.nanoTime(), CLOCK_MONOTONIC on Linux: the
// same clock as std::chrono::steady_clock, so the two compare directly.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <system_error>
#include <utility>

#include <asio/use_future.hpp>
#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "redisson_driver.hpp"

namespace relock::test {

// A waiter woken by a message gets the lock within this; one left to its timer would take the
// hold's 30 s TTL. Generous, for JVMs on a loaded machine.
inline constexpr std::chrono::seconds woken_within{5};

// A lock's hash as HGETALL reads it: owner field (or "mode") -> value.
using fields = std::map<std::string, std::string>;

// The channel a reentrant (or fenced) lock's releases publish on, and its waiters listen to.
inline std::string lock_channel(const std::string& name) {
  return "redisson_lock__channel:{" + name + "}";
}
// A read-write lock's channel (both sides' releases, both sides' waiters).
inline std::string rwlock_channel(const std::string& name) {
  return "redisson_rwlock:{" + name + "}";
}
// Both semaphores' channel: a release or an add publishes the new count there.
inline std::string semaphore_channel(const std::string& name) {
  return "redisson_sc:{" + name + "}";
}
// A count-down latch's channel: literal braces around the name, whatever it holds.
inline std::string latch_channel(const std::string& name) {
  return "redisson_countdownlatch__channel__{" + name + "}";
}

// The steady clock (CLOCK_MONOTONIC) now, in the unit of a driver reply's start_ns/end_ns.
inline std::int64_t now_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

// Nanoseconds from `since` (steady clock, CLOCK_MONOTONIC) to a driver reply's end_ns.
inline std::int64_t ns_after(std::chrono::steady_clock::time_point since,
                             const nlohmann::json& reply) {
  return reply["end_ns"].get<std::int64_t>() - since.time_since_epoch().count();
}

// How long the driver's command ran, on its owner's thread.
inline std::int64_t took_ns(const nlohmann::json& reply) {
  return reply["end_ns"].get<std::int64_t>() - reply["start_ns"].get<std::int64_t>();
}

// Milliseconds from `since` to a driver reply's end_ns.
inline double ms_to_end(std::chrono::steady_clock::time_point since, const nlohmann::json& reply) {
  return static_cast<double>(ns_after(since, reply)) / 1e6;
}

// Milliseconds from a driver reply's start_ns to `at`.
inline double ms_since_start(const nlohmann::json& reply,
                             std::chrono::steady_clock::time_point at) {
  return static_cast<double>(at.time_since_epoch().count() -
                             reply["start_ns"].get<std::int64_t>()) /
         1e6;
}

// `f(stop)` on a thread of its own: what it returned, and when. Leaving the scope requests a
// stop and waits for the thread, so a failed test never hangs on a waiter.
template <class T>
class on_thread {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  template <class F>
  explicit on_thread(F f)
      : result_(std::async(std::launch::async, [f = std::move(f), stop = stop_.get_token()] {
          T value = f(stop);
          return std::make_pair(std::move(value), std::chrono::steady_clock::now());
        })) {}
  ~on_thread() {
    stop_.request_stop();
    if (result_.valid()) result_.wait();
  }
  on_thread(const on_thread&) = delete;
  on_thread& operator=(const on_thread&) = delete;

  bool done(std::chrono::milliseconds within = std::chrono::milliseconds(0)) {
    return result_.wait_for(within) == std::future_status::ready;
  }
  std::pair<T, time_point> get() { return result_.get(); }

 private:
  std::stop_source stop_;
  std::future<std::pair<T, time_point>> result_;
};

// How an acquire by an explicit relock owner ended, and when its completion ran.
struct outcome {
  std::error_code ec;
  bool acquired = false;
  std::chrono::steady_clock::time_point at;
};

// A waiting try_lock by `who` on `lock` (or on one side of a read-write lock); the future is
// ready when it ends.
inline std::future<outcome> try_as(relock::mutex& lock, relock::owner who,
                                   std::chrono::milliseconds wait) {
  auto done = std::make_shared<std::promise<outcome>>();
  auto result = done->get_future();
  relock::lock_options options;
  options.wait = wait;
  lock.async_try_lock(who, std::move(options), [done](std::error_code ec, bool acquired) {
    done->set_value({ec, acquired, std::chrono::steady_clock::now()});
  });
  return result;
}

inline void unlock_as(relock::mutex& lock, relock::owner who) {
  lock.async_unlock(who, asio::use_future).get();
}

inline bool ready(std::future<outcome>& f,
                  std::chrono::milliseconds within = std::chrono::milliseconds(0)) {
  return f.wait_for(within) == std::future_status::ready;
}

// `lock.try_lock(wait)` on a thread of its own (so by an owner of its own), which lets the lock
// go at once if it got it: whether it got it, and when.
inline std::future<std::pair<bool, std::chrono::steady_clock::time_point>> try_on_thread(
    relock::mutex& lock, std::chrono::milliseconds wait) {
  return std::async(std::launch::async, [&lock, wait] {
    bool got = lock.try_lock(wait);
    auto at = std::chrono::steady_clock::now();
    if (got) lock.unlock();
    return std::make_pair(got, at);
  });
}

// The relock waiter `waiting` gets the lock (it answers within 10 s); `at`, when given, is set to
// the time its completion ran. Fatal failures return early; call it in ASSERT_NO_FATAL_FAILURE.
inline void expect_acquired(std::future<outcome>& waiting,
                            std::chrono::steady_clock::time_point* at = nullptr) {
  ASSERT_TRUE(ready(waiting, std::chrono::seconds(10)));
  auto o = waiting.get();
  ASSERT_FALSE(o.ec) << o.ec.message();
  ASSERT_TRUE(o.acquired);
  if (at) *at = o.at;
}

// The relock waiter `waiting` gets the lock within woken_within of `released`: a release message
// woke it. Fatal failures return early; call it in ASSERT_NO_FATAL_FAILURE.
inline void expect_woken(std::future<outcome>& waiting,
                         std::chrono::steady_clock::time_point released) {
  std::chrono::steady_clock::time_point at;
  ASSERT_NO_FATAL_FAILURE(expect_acquired(waiting, &at));
  EXPECT_LT(at - released, woken_within);
}

// The Java waiter that `id` names (a trylock sent to `java`) gets the lock within woken_within
// of `released`. Fatal failures return early; call it in ASSERT_NO_FATAL_FAILURE.
inline void expect_java_woken(redisson_driver& java, const std::string& id,
                              std::chrono::steady_clock::time_point released) {
  auto r = java.wait_reply(id, std::chrono::seconds(10));
  ASSERT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), std::chrono::nanoseconds(woken_within).count());
}

}  // namespace relock::test
