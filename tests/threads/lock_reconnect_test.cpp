// SPDX-License-Identifier: Apache-2.0
// A wait rides through a lost connection: a restarted server or killed connections are reasons
// to reconnect, resubscribe and try again. Only a deadline that passes with Redis still away
// ends it with errc::connection. And a holder's last millisecond is not mistaken for "no TTL".
#include <gtest/gtest.h>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

namespace {

using steady = std::chrono::steady_clock;

relock::config quick_reconnects(const redis_server& server) {
  auto c = settings_for(server);
  c.command_timeout = 500ms;
  c.reconnect_max_delay = 200ms;
  return c;
}

}  // namespace

TEST(lock_reconnect, a_waiter_rides_through_a_server_restart) {
  redis_server server;
  relock::client client(quick_reconnects(server));
  {
    auto raw = raw_client::to(server);
    raw.command({"HSET", "job", "elsewhere:1", "1"});
    raw.command({"PEXPIRE", "job", "60000"});
  }
  auto lk = client.lock("job");
  auto waiting = std::async(std::launch::async, [lk]() mutable {
    return error_of([&] {
      ASSERT_TRUE(lk.try_lock(30s));
      lk.unlock();
    });
  });
  {
    auto raw = raw_client::to(server);
    ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{job}"); }, 5s));
  }
  server.kill();  // without persistence: it comes back empty, the holder's lock gone with it
  ASSERT_NE(waiting.wait_for(1500ms), std::future_status::ready) << "the wait failed at once";
  server.start();
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), std::error_code());
}

TEST(lock_reconnect, a_waiter_rides_through_killed_connections_and_still_hears_the_release) {
  redis_server server;
  relock::client client(quick_reconnects(server));
  relock::client holder(quick_reconnects(server));
  auto raw = raw_client::to(server);
  auto held = holder.lock("shared");
  const auto me = relock::owner::unique();
  std::promise<void> taken;
  held.async_lock(me, {}, [&](std::error_code ec) {
    EXPECT_FALSE(ec);
    taken.set_value();
  });
  taken.get_future().get();

  auto lk = client.lock("shared");
  auto waiting = std::async(std::launch::async, [lk]() mutable {
    auto start = steady::now();
    auto ec = error_of([&] {
      lk.lock();
      lk.unlock();
    });
    return std::make_pair(ec, steady::now() - start);
  });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{shared}"); }, 5s));
  // Every relock connection goes: commands and subscriptions alike (this one is skipped).
  raw.command({"CLIENT", "KILL", "TYPE", "normal"});
  raw.command({"CLIENT", "KILL", "TYPE", "pubsub"});
  ASSERT_NE(waiting.wait_for(1s), std::future_status::ready) << "the wait failed at once";
  // Resubscribed: the release's message, not the holder's 30 s lease, ends the wait.
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{shared}"); }, 5s));
  std::promise<std::error_code> released;
  held.async_unlock(me, [&](std::error_code ec) { released.set_value(ec); });
  EXPECT_EQ(released.get_future().get(), std::error_code());
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto [ec, waited] = waiting.get();
  EXPECT_EQ(ec, std::error_code()) << ec.message();
  EXPECT_LT(waited, 10s);
}

TEST(lock_reconnect, a_wait_whose_deadline_finds_redis_still_away_fails_with_connection) {
  redis_server server;
  relock::client client(quick_reconnects(server));
  auto lk = client.lock("gone");
  lk.lock(60s);  // held by this thread; the waiter below is another owner
  auto waiting = std::async(std::launch::async, [lk]() mutable {
    auto start = steady::now();
    auto ec = error_of([&] { lk.try_lock(2s); });
    return std::make_pair(ec, steady::now() - start);
  });
  {
    auto raw = raw_client::to(server);
    ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{gone}"); }, 5s));
  }
  server.kill();
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  auto [ec, waited] = waiting.get();
  EXPECT_EQ(ec, errc::connection) << ec.message();
  EXPECT_GE(waited, 1900ms) << "failed before its deadline";
}

TEST(lock_reconnect,
     a_paused_server_within_the_wait_leaks_no_hold_and_the_wait_ends_in_connection) {
  redis_server server;
  auto c = settings_for(server);
  c.command_timeout = 300ms;
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("stuck");
  server.pause();  // every try is written, but no reply comes in time
  EXPECT_EQ(error_of([&] { lk.try_lock(1s); }), errc::connection);
  server.resume();
  // The tries ran once the server woke; the cleanup releases behind them undid them.
  EXPECT_TRUE(wait_until([&] { return raw.command({"EXISTS", "stuck"}).integer == 0; }, 5s));
  // Without a wait there is nothing to ride through: a single try fails as it always did.
  server.pause();
  EXPECT_EQ(error_of([&] { lk.try_lock(); }), errc::timeout);
  server.resume();
  EXPECT_TRUE(wait_until([&] { return raw.command({"EXISTS", "stuck"}).integer == 0; }, 5s));
}

TEST(lock_reconnect, a_waiter_woken_by_the_holders_ttl_is_not_a_second_late) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("expiring");
  // The waiter's try lands in the holder's last millisecond often enough: PTTL answers 0, which
  // once read as "no TTL" and cost a 1 s recheck. Three rounds make a miss unlikely to hide.
  for (int round = 0; round < 3; ++round) {
    raw.command({"HSET", "expiring", "elsewhere:1", "1"});
    raw.command({"PEXPIRE", "expiring", "800"});
    const auto start = steady::now();
    lk.lock();
    const auto waited = steady::now() - start;
    lk.unlock();
    EXPECT_LT(waited, 800ms + 600ms) << "round " << round;
  }
}
