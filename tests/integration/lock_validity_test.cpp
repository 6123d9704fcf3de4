// SPDX-License-Identifier: Apache-2.0
// The local validity deadline (mutex::valid_until): what a holder can count on without asking
// Redis, and the loss report that comes by that deadline when renewals cannot get through.
#include <gtest/gtest.h>

#include <atomic>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

TEST(lock_validity, a_hold_is_valid_for_its_lease_less_the_margin_from_the_acquire_sent) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("valid");
  EXPECT_EQ(lk.valid_until(), std::nullopt);
  const auto before = steady::now();
  ASSERT_TRUE(lk.try_lock(0ms, 10s));
  const auto after = steady::now();
  const auto until = lk.valid_until();
  ASSERT_TRUE(until.has_value());
  // Sent between before and after; 10 s less 1% and 2 ms.
  EXPECT_GE(*until, before + 10s - 102ms);
  EXPECT_LE(*until, after + 10s - 102ms);
  EXPECT_LE(*lk.valid_for(), 10s - 102ms);
  // Another thread's owner holds nothing here.
  EXPECT_EQ(on_other_thread([&] { return lk.valid_for(); }), std::nullopt);
  lk.unlock();
  EXPECT_EQ(lk.valid_until(), std::nullopt);
}

TEST(lock_validity, renewals_move_the_deadline_on) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 900ms;  // a renewal every 300 ms
  relock::client client(c);
  auto lk = client.lock("renewed");
  lk.lock();
  const auto first = *lk.valid_until();
  EXPECT_TRUE(wait_until([&] { return *lk.valid_until() > first + 200ms; }, 3s));
  // The key outlives the deadline on the server's side of the margin.
  raw_client raw = raw_client::to(server);
  const auto pttl = raw.command({"PTTL", lk.key()}).integer;
  EXPECT_GE(steady::now() + std::chrono::milliseconds(pttl) + 5ms, *lk.valid_until());
  lk.unlock();
}

TEST(lock_validity, an_unreachable_server_is_reported_lost_by_the_deadline_before_the_key_expires) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 1500ms;  // a renewal every 500 ms
  c.command_timeout = 200ms;
  std::atomic<std::int64_t> lost_at{0};
  c.on_lock_lost = [&](std::string_view, std::string_view, std::error_code why) {
    EXPECT_EQ(why, errc::renewal_failed);
    lost_at = steady::now().time_since_epoch().count();
  };
  relock::client client(c);
  auto lk = client.lock("silent");
  lk.lock();
  server.pause();
  const auto paused_at = steady::now();
  // Known now, before the silence can move it.
  const auto deadline = *lk.valid_until();
  ASSERT_TRUE(wait_until([&] { return lost_at.load() != 0; }, 5s));
  const steady::time_point heard{steady::duration(lost_at.load())};
  std::cout << "lost reported " << (heard - deadline) / 1us << " us after the deadline, "
            << (heard - paused_at) / 1ms << " ms after the pause" << std::endl;
  EXPECT_GE(heard, deadline);
  EXPECT_LE(heard, deadline + 100ms);  // a timer at the deadline, not the next renewal tick
  server.resume();
  std::error_code ec;
  lk.unlock(ec);
  EXPECT_EQ(ec, errc::lock_lost);
}
