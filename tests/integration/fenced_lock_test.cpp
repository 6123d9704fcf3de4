// SPDX-License-Identifier: Apache-2.0
// relock's fenced lock (client::fenced_lock) on a real Redis: every acquisition takes the next
// token of redisson_lock_token:{name}, across threads and processes; the lease is honoured by
// every overload; fence() is the outermost acquisition's token; a plain lock on the name
// excludes without advancing the counter; a counter that is not an integer is refused.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <set>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

namespace {
const std::string token_key = "redisson_lock_token:{fenced}";
}  // namespace

// Two processes of four threads, 1,000 acquisitions (a tenth of them re-entered): in the order
// the holds happened, tokens strictly increase, and no token is handed out twice.
TEST(fenced_lock, tokens_strictly_increase_across_threads_and_processes) {
  redis_server server;
  constexpr int processes = 2, threads_each = 4, per_thread = 125;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(fork_child([&] {
      relock::client c(settings_for(server));
      std::atomic<int> failures{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < threads_each; ++t) {
        threads.emplace_back([&, t] {
          try {
            auto raw = raw_client::to(server);
            auto lock = c.fenced_lock("fenced");
            for (int i = 0; i < per_thread; ++i) {
              const std::int64_t token = lock.lock_and_get_token();
              // Written while held: the list is in hold order.
              raw.command({"RPUSH", "held-tokens", std::to_string(token)});
              if ((i + t) % 10 == 0) {
                const std::int64_t inner = lock.lock_and_get_token();
                raw.command({"RPUSH", "held-tokens", std::to_string(inner)});
                if (inner <= token || lock.fence() != token) ++failures;
                lock.unlock();
              }
              lock.unlock();
            }
          } catch (...) {
            ++failures;
          }
        });
      }
      for (auto& t : threads) t.join();
      return failures == 0 ? 0 : 1;
    }));
    ASSERT_GT(children.back(), 0);
  }
  expect_children_succeed(children);
  auto raw = raw_client::to(server);
  std::vector<std::int64_t> tokens;
  for (auto& e : raw.command({"LRANGE", "held-tokens", "0", "-1"}).elements) {
    tokens.push_back(std::stoll(e.str));
  }
  ASSERT_GE(tokens.size(), 1000u);
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    ASSERT_LT(tokens[i - 1], tokens[i]) << "at hold " << i;
  }
  EXPECT_EQ(std::set<std::int64_t>(tokens.begin(), tokens.end()).size(), tokens.size());
  EXPECT_EQ(std::stoll(raw.command({"GET", token_key}).str), tokens.back());
  EXPECT_EQ(raw.command({"PTTL", token_key}).integer, -1) << "the counter never expires";
}

TEST(fenced_lock, every_overload_honours_its_lease) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fenced_lock("fenced");
  constexpr auto lease = 700ms;
  auto expect_leased = [&](const char* how) {
    const auto pttl = raw.command({"PTTL", "fenced"}).integer;
    EXPECT_GT(pttl, 0) << how;
    EXPECT_LE(pttl, lease.count()) << how;
    // No watchdog: the hold simply ends.
    EXPECT_TRUE(wait_until(
        [&] {
          return raw.command({"EXISTS", "fenced"}).integer == 0;
        },
        3s))
        << how;
  };
  EXPECT_EQ(lock.lock_and_get_token(lease), 1);
  expect_leased("lock_and_get_token(lease)");
  // The same thread again: its old hold expired unseen, so this one is new, and so is its fence.
  EXPECT_EQ(lock.try_lock_and_get_token(1s, lease), 2);
  EXPECT_EQ(lock.fence(), 2);
  expect_leased("try_lock_and_get_token(wait, lease)");
  relock::lock_options o;
  o.lease = lease;
  EXPECT_EQ(lock.async_lock_and_get_token(relock::owner::unique(), o, asio::use_future).get(), 3);
  expect_leased("async_lock_and_get_token");
  EXPECT_EQ(lock.async_try_lock_and_get_token(relock::owner::unique(), o, asio::use_future).get(),
            4);
  expect_leased("async_try_lock_and_get_token");
  EXPECT_EQ(lock.token(), 4);
}

TEST(fenced_lock, fence_is_the_outermost_token_while_reentries_advance_the_counter) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lock = client.fenced_lock("fenced");
  EXPECT_EQ(lock.token(), 0);
  EXPECT_EQ(lock.fence(), std::nullopt);
  const auto outer = lock.lock_and_get_token();
  const auto inner = lock.try_lock_and_get_token();
  ASSERT_TRUE(inner);
  EXPECT_GT(*inner, outer);
  EXPECT_EQ(lock.fence(), outer);
  EXPECT_EQ(lock.token(), *inner);
  lock.unlock();
  EXPECT_EQ(lock.fence(), outer);
  lock.unlock();
  EXPECT_EQ(lock.fence(), std::nullopt);
  // Another owner's hold is its own.
  const auto other = relock::owner::unique();
  const auto t = lock.async_lock_and_get_token(other, {}, asio::use_future).get();
  EXPECT_EQ(lock.fence(other), t);
  EXPECT_EQ(lock.fence(), std::nullopt);
  EXPECT_FALSE(on_other_thread([&] { return lock.try_lock_and_get_token(); }));
  lock.async_unlock(other, asio::use_future).get();
}

TEST(fenced_lock, a_plain_lock_on_the_name_excludes_and_leaves_the_counter_alone) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto fenced = client.fenced_lock("fenced");
  auto plain = client.lock("fenced");
  EXPECT_EQ(fenced.lock_and_get_token(), 1);
  EXPECT_FALSE(on_other_thread([&] { return plain.try_lock(); }));
  fenced.unlock();
  plain.lock();
  EXPECT_EQ(on_other_thread([&] { return fenced.try_lock_and_get_token(); }), std::nullopt);
  plain.lock();  // a re-entry of the plain lock
  EXPECT_EQ(raw.command({"GET", token_key}).str, "1");
  plain.unlock();
  plain.unlock();
  // A waiting fenced acquire wakes on the plain lock's release (same channel).
  plain.lock();
  auto waiter = std::async(std::launch::async, [&] {
    auto t = fenced.try_lock_and_get_token(5s);
    if (t) fenced.unlock();
    return t;
  });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{fenced}"); }, 5s));
  plain.unlock();
  EXPECT_EQ(waiter.get(), 2);
}

TEST(fenced_lock, a_counter_that_is_not_an_integer_is_refused_and_nothing_changes) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fenced_lock("fenced");
  raw.command({"SET", token_key, "twelve"});
  try {
    lock.lock_and_get_token();
    FAIL() << "acquired with a broken counter";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::wrong_type);
    EXPECT_NE(std::string(e.what()).find("twelve"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw.command({"EXISTS", "fenced"}).integer, 0);
  EXPECT_EQ(raw.command({"GET", token_key}).str, "twelve");
  EXPECT_EQ(error_of([&] { (void)lock.token(); }), errc::wrong_type);

  // A negative counter would hand out a token that reads as a refusal.
  raw.command({"SET", token_key, "-2"});
  EXPECT_EQ(error_of([&] { (void)lock.lock_and_get_token(); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"EXISTS", "fenced"}).integer, 0);

  raw.command({"DEL", token_key});
  raw.command({"RPUSH", token_key, "1"});
  EXPECT_EQ(error_of([&] { (void)lock.try_lock_and_get_token(); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"EXISTS", "fenced"}).integer, 0);
  EXPECT_EQ(raw.command({"LLEN", token_key}).integer, 1);
}
