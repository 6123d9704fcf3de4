// SPDX-License-Identifier: Apache-2.0
// count_down_latch (Redisson's RCountDownLatch) on a real server: the name holds the count, and the
// count-down to zero publishes 0 on redisson_countdownlatch__channel__{name}, which opens every
// awaiter of every process at once, sync and async (redisson/redisson#5349); try_set_count only
// on an open latch; timed awaits, delete_latch, stops and bad input.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <asio/use_future.hpp>
#include <atomic>
#include <cstdint>
#include <future>
#include <iostream>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_process.hpp"
#include "support/expect_messages.hpp"
#include "support/lock_env.hpp"
#include "support/raw_subscriber.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

const std::string channel = "redisson_countdownlatch__channel__{latch}";

// CLOCK_MONOTONIC is one clock for every process of the machine.
std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

// 5 awaiters, 2 threads in a child process and 3 here, each process with its own client: all
// return within 100 ms of the last count_down, none before it.
TEST(count_down_latch, five_awaiters_in_two_processes_open_within_100_ms_of_the_last_count_down) {
  redis_server server;
  raw_client::to(server).command({"SET", "latch", "2"});  // before the fork: no client, no thread

  // Each awaiter pushes "ready" before it awaits and, once open, the CLOCK_MONOTONIC instant it
  // returned at to "opened". A 30 s wait keeps a failing test finite.
  auto await_on = [&server](relock::client& c, int threads) {
    std::atomic<int> failures{0};
    std::vector<std::thread> awaiters;
    for (int t = 0; t < threads; ++t) {
      awaiters.emplace_back([&] {
        try {
          auto raw = raw_client::to(server);
          auto latch = c.count_down_latch("latch");
          raw.command({"RPUSH", "ready", "1"});
          const bool opened = latch.await(30s);
          const std::int64_t at = mono_ns();
          if (!opened) ++failures;
          raw.command({"RPUSH", "opened", std::to_string(at)});
        } catch (...) {
          ++failures;
        }
      });
    }
    for (auto& a : awaiters) a.join();
    return failures.load();
  };
  const pid_t child = fork_child([&] {
    relock::client c(settings_for(server));
    return await_on(c, 2) == 0 ? 0 : 1;
  });
  ASSERT_GT(child, 0);

  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto here = std::async(std::launch::async, [&] { return await_on(client, 3); });
  ASSERT_TRUE(wait_until([&] { return raw.command({"LLEN", "ready"}).integer == 5; }, 10s));
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= 2;
      },
      5s))
      << "both clients listen";
  auto latch = client.count_down_latch("latch");
  latch.count_down();
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(raw.command({"LLEN", "opened"}).integer, 0);

  const std::int64_t last_count_down = mono_ns();
  latch.count_down();
  ASSERT_EQ(here.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(here.get(), 0);
  expect_children_succeed({child});
  EXPECT_EQ(raw.command({"EXISTS", "latch"}).integer, 0);
  const auto opened = raw.command({"LRANGE", "opened", "0", "-1"}).elements;
  ASSERT_EQ(opened.size(), 5u);
  std::int64_t latest = 0;
  for (const auto& e : opened) {
    const std::int64_t at = std::stoll(e.str);
    EXPECT_GE(at, last_count_down) << "opened before the count reached 0";
    EXPECT_LE(at - last_count_down, 100'000'000) << (at - last_count_down) / 1'000'000 << " ms";
    latest = std::max(latest, at - last_count_down);
  }
  std::cout << "the last of 5 awaiters returned " << latest / 1'000
            << " us after the last count_down" << std::endl;
}

// try_set_count only on an open latch (it publishes 1); count(); the count-down to 0 deletes the
// key and publishes 0; a count-down of an open latch changes and publishes nothing.
TEST(count_down_latch, try_set_count_count_and_count_down_on_redissons_data) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto latch = client.count_down_latch("latch");
  EXPECT_EQ(latch.key(), "latch");
  EXPECT_EQ(latch.count(), 0);
  raw_subscriber sub(server, channel);
  EXPECT_TRUE(latch.try_set_count(2));
  EXPECT_EQ(raw.command({"GET", "latch"}).str, "2");
  EXPECT_FALSE(latch.try_set_count(5));
  EXPECT_EQ(raw.command({"GET", "latch"}).str, "2");
  EXPECT_EQ(latch.count(), 2);
  EXPECT_FALSE(latch.await(0ms));
  latch.count_down();
  EXPECT_EQ(latch.count(), 1);
  latch.count_down();
  EXPECT_EQ(latch.count(), 0);
  EXPECT_EQ(raw.command({"EXISTS", "latch"}).integer, 0);
  EXPECT_TRUE(latch.await(0ms));
  latch.count_down();  // open already
  EXPECT_EQ(raw.command({"EXISTS", "latch"}).integer, 0);
  expect_messages(raw, sub, channel, {"1", "0"});
  EXPECT_TRUE(latch.try_set_count(1));
  EXPECT_EQ(latch.count(), 1);
}

// A timed await of a closed latch returns false once its wait is over, not much later; of an
// open one true at once.
TEST(count_down_latch, a_timed_await_is_false_when_the_wait_runs_out) {
  redis_server server;
  relock::client client(settings_for(server));
  auto latch = client.count_down_latch("latch");
  const auto open_started = steady::now();
  EXPECT_TRUE(latch.await(5s));
  EXPECT_LT(steady::now() - open_started, 1s);
  ASSERT_TRUE(latch.try_set_count(1));
  const auto started = steady::now();
  EXPECT_FALSE(latch.await(300ms));
  const auto took = steady::now() - started;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1500ms);
  EXPECT_FALSE(latch.async_await(300ms, {}, asio::use_future).get());
  EXPECT_EQ(latch.count(), 1);
}

// delete_latch opens the latch for its awaiters at once (it publishes 0); false when open.
TEST(count_down_latch, delete_latch_opens_awaiters) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), deleter(settings_for(server));
  auto latch = client.count_down_latch("latch");
  ASSERT_TRUE(latch.try_set_count(3));
  std::atomic<bool> returned{false};
  steady::time_point returned_at{};
  auto awaiting = std::async(std::launch::async, [&] {
    const bool opened = latch.await(15s);
    returned_at = steady::now();
    returned = true;
    return opened;
  });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  raw_subscriber sub(server, channel);
  EXPECT_FALSE(returned);
  const auto deleted_at = steady::now();
  EXPECT_TRUE(deleter.count_down_latch("latch").delete_latch());
  ASSERT_EQ(awaiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(awaiting.get());
  EXPECT_LT(returned_at - deleted_at, 300ms);
  std::cout << "the awaiter returned " << (returned_at - deleted_at) / 1ms
            << " ms after delete_latch" << std::endl;
  EXPECT_EQ(raw.command({"EXISTS", "latch"}).integer, 0);
  EXPECT_FALSE(latch.delete_latch());
  expect_messages(raw, sub, channel, {"0"});
}

// redisson/redisson#5349: several async awaiters (futures and callbacks, two clients) all
// complete, opened, on the count-down to zero.
TEST(count_down_latch, several_async_awaiters_all_complete_on_the_count_down_to_zero) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), other(settings_for(server));
  auto latch = client.count_down_latch("latch");
  auto other_latch = other.count_down_latch("latch");
  ASSERT_TRUE(latch.try_set_count(1));

  std::vector<std::future<bool>> futures;
  for (int i = 0; i < 3; ++i)
    futures.push_back(latch.async_await(std::nullopt, {}, asio::use_future));
  futures.push_back(latch.async_await(20s, {}, asio::use_future));
  futures.push_back(other_latch.async_await(std::nullopt, {}, asio::use_future));
  std::vector<std::promise<std::pair<std::error_code, bool>>> called(3);
  for (auto& p : called) {
    latch.async_await(std::nullopt, {}, [&p](std::error_code ec, bool opened) {
      p.set_value({ec, opened});
    });
  }
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= 2;
      },
      5s));
  for (auto& f : futures) EXPECT_EQ(f.wait_for(0ms), std::future_status::timeout);

  const auto counted_at = steady::now();
  other_latch.async_count_down(asio::use_future).get();
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(f.get());
  }
  for (auto& p : called) {
    auto f = p.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    const auto [ec, opened] = f.get();
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(opened);
  }
  std::cout << "8 async awaiters completed within " << (steady::now() - counted_at) / 1ms
            << " ms of the count-down" << std::endl;
}

// A stop request ends an await with cancelled, sync and async; the latch stays closed.
TEST(count_down_latch, a_stop_request_cancels_an_await) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto latch = client.count_down_latch("latch");
  ASSERT_TRUE(latch.try_set_count(1));
  std::stop_source stop;
  auto awaiting = std::async(std::launch::async,
                             [&] { return error_of([&] { latch.await(stop.get_token()); }); });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  EXPECT_EQ(awaiting.wait_for(0ms), std::future_status::timeout);
  stop.request_stop();
  ASSERT_EQ(awaiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(awaiting.get(), errc::cancelled);

  std::stop_source async_stop;
  auto async_awaiting = async_error<bool>(
      [&](auto h) { latch.async_await(std::nullopt, async_stop.get_token(), h); });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  async_stop.request_stop();
  ASSERT_EQ(async_awaiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(async_awaiting.get(), errc::cancelled);
  EXPECT_EQ(raw.command({"GET", "latch"}).str, "1");
}

// Counts below 1 and negative waits are refused before any I/O; a name holding a hash is
// wrong_type for every call, and the hash stays.
TEST(count_down_latch, bad_input_is_refused_and_changes_nothing) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  EXPECT_EQ(error_of([&] { client.count_down_latch(""); }), errc::invalid_argument);
  auto latch = client.count_down_latch("latch");
  EXPECT_EQ(error_of([&] { latch.try_set_count(0); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { latch.try_set_count(-1); }), errc::invalid_argument);
  EXPECT_EQ(raw.command({"EXISTS", "latch"}).integer, 0);
  ASSERT_TRUE(latch.try_set_count(1));
  EXPECT_EQ(error_of([&] { latch.await(-1ms); }), errc::invalid_argument);
  EXPECT_EQ(async_error_of<bool>([&](auto h) { latch.async_await(-1ms, {}, h); }),
            errc::invalid_argument);
  EXPECT_EQ(raw.command({"GET", "latch"}).str, "1");

  raw.command({"HSET", "hashed", "field", "value"});
  auto typed = client.count_down_latch("hashed");
  EXPECT_EQ(error_of([&] { typed.try_set_count(2); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.count_down(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.count(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.await(1s); }), errc::wrong_type);
  EXPECT_EQ(async_error_of<bool>([&](auto h) { typed.async_await(1s, {}, h); }), errc::wrong_type);
  EXPECT_EQ(async_error_of<>([&](auto h) { typed.async_count_down(h); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.delete_latch(); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"TYPE", "hashed"}).str, "hash");
  const auto fields = raw.command({"HGETALL", "hashed"});
  ASSERT_EQ(fields.elements.size(), 2u);
  EXPECT_EQ(fields.elements[0].str, "field");
  EXPECT_EQ(fields.elements[1].str, "value");
}
