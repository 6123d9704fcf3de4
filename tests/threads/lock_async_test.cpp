// SPDX-License-Identifier: Apache-2.0
// The async face: callbacks, futures and C++20 coroutines, with explicit owners.
#include <gtest/gtest.h>

#include <atomic>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include "support/command_stats.hpp"
#include "support/lock_env.hpp"
#include "support/unlock_latches.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

TEST(lock_async, a_coroutine_locks_and_unlocks_on_its_own_executor) {
  redis_server server;
  // Declared before the client: relock's thread may still be inside post() to it when the
  // coroutine has finished, so it must outlive the client (see detail/completion.hpp).
  asio::io_context mine;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("coro");
  std::error_code result = errc::timeout;
  bool ran_on_mine = false;
  asio::co_spawn(
      mine,
      [&]() -> asio::awaitable<void> {
        auto me = relock::owner::unique();
        co_await lk.async_lock(me, {}, asio::use_awaitable);
        // Completions come back through the awaiting coroutine's executor, not relock's thread.
        ran_on_mine = mine.get_executor().running_in_this_thread();
        EXPECT_EQ(raw.command({"HGET", "coro", lk.owner_field(me)}).str, "1");
        // An error would throw here; a refusal is just false.
        bool again = co_await lk.async_try_lock(relock::owner::unique(), {}, asio::use_awaitable);
        EXPECT_FALSE(again);  // another owner
        co_await lk.async_unlock(me, asio::use_awaitable);
        result = {};
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  mine.run_for(10s);
  EXPECT_FALSE(result);
  EXPECT_TRUE(ran_on_mine);
  EXPECT_EQ(raw.command({"EXISTS", "coro"}).integer, 0);
}

TEST(lock_async, an_owner_may_lock_on_one_thread_and_unlock_on_another) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("hop");
  auto me = relock::owner::unique();
  lk.async_lock(me, {}, asio::use_future).get();
  auto ec = std::async(std::launch::async, [&] {
              try {
                lk.async_unlock(me, asio::use_future).get();
                return std::error_code();
              } catch (const std::system_error& e) {
                return e.code();
              }
            }).get();
  EXPECT_FALSE(ec);
  EXPECT_FALSE(lk.is_locked());
}

TEST(lock_async, a_bounded_async_lock_times_out_and_an_unheld_unlock_is_not_owner) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("bounded");
  lk.lock();
  relock::lock_options o;
  o.wait = 200ms;
  std::promise<std::error_code> got;
  lk.async_lock(relock::owner::unique(), o, [&](std::error_code ec) { got.set_value(ec); });
  EXPECT_EQ(got.get_future().get(), errc::not_acquired);  // Redis answered: not a timeout
  std::promise<std::error_code> unlocked;
  lk.async_unlock(relock::owner::unique(), [&](std::error_code ec) { unlocked.set_value(ec); });
  EXPECT_EQ(unlocked.get_future().get(), errc::not_owner);
  lk.unlock();
}

TEST(lock_async, unlock_latches_are_deleted_many_per_command) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  constexpr int n = 64;
  auto me = relock::owner::unique();
  std::vector<relock::mutex> locks;
  for (int i = 0; i < n; ++i) locks.push_back(client.lock("batch:" + std::to_string(i)));
  std::vector<std::future<void>> held;
  for (auto& lk : locks) held.push_back(lk.async_lock(me, {}, asio::use_future));
  for (auto& f : held) f.get();

  raw.command({"CONFIG", "RESETSTAT"});
  // All started in one pass of the I/O loop, so each connection writes them together and
  // their replies come back together: what lets the latches share DELs.
  std::promise<int> all_released;
  auto failures = std::make_shared<std::atomic<int>>(0);
  auto left = std::make_shared<std::atomic<int>>(n);
  asio::post(relock::detail::core_of(client)->io(), [&] {
    for (auto& lk : locks) {
      lk.async_unlock(me, [&, failures, left](std::error_code ec) {
        if (ec) ++*failures;
        if (--*left == 0) all_released.set_value(failures->load());
      });
    }
  });
  ASSERT_EQ(all_released.get_future().get(), 0);
  // Every latch goes (data-layout §1: deleted once its release has completed)...
  EXPECT_TRUE(wait_until([&] { return unlock_latches(raw) == 0; }, 5s));
  // ...and releases that complete together share DEL commands.
  // The counter includes the DEL each release script makes of its own lock key.
  const auto dels = calls_of(raw, "del") - n;
  EXPECT_GE(dels, 1);
  EXPECT_LT(dels, n);
}
