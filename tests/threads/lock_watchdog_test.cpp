// SPDX-License-Identifier: Apache-2.0
// Leases, the watchdog, lost locks, and a holder that dies.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include <asio/use_future.hpp>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

std::size_t watchdog_holds(relock::client& c) {
  std::promise<std::size_t> n;
  asio::post(relock::detail::core_of(c)->io(),
             [&] { n.set_value(relock::detail::core_of(c)->watchdog().holds()); });
  return n.get_future().get();
}

}  // namespace

TEST(lock_lease, an_explicit_lease_expires_and_the_late_unlock_reports_it) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("leased");
  lk.lock(300ms);
  EXPECT_EQ(watchdog_holds(client), 1u);  // recorded, never renewed
  EXPECT_TRUE(wait_until([&] { return !lk.is_locked(); }, 3s));
  std::error_code ec;
  lk.unlock(ec);
  EXPECT_EQ(ec, errc::lock_lost);
}

TEST(lock_watchdog, a_one_second_watchdog_keeps_a_lock_for_five_seconds) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 1s;
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("kept");
  lk.lock();
  auto until = steady::now() + 5s;
  std::int64_t lowest_ttl = 1000;
  while (steady::now() < until) {
    auto ttl = raw.command({"PTTL", "kept"}).integer;
    ASSERT_GT(ttl, 0) << "the lock expired while held";
    lowest_ttl = std::min(lowest_ttl, ttl);
    std::this_thread::sleep_for(50ms);  // sampling the TTL, not waiting for an outcome
  }
  // Renewed every lease/3: the TTL never fell much below two thirds of the lease.
  EXPECT_GT(lowest_ttl, 450);
  lk.unlock();
  EXPECT_EQ(raw.command({"EXISTS", "kept"}).integer, 0);
}

TEST(lock_watchdog, renewals_are_batched_a_hundred_keys_per_script_call) {
  redis_server server;
  auto c = settings_for(server);
  // A tick every two seconds: 1,000 holds must not need their renewals answered within a few
  // hundred ms on a loaded machine, or their validity deadlines report them lost. A full ASan run
  // beside two JVMs starved a 1.5 s lease's; one at ctest -j4 (the CPUs 95 % busy) a 3 s lease's:
  // the window below saw no renewal at all, and the unlocks found the holds lost.
  c.watchdog_lease = 6000ms;
  relock::client client(c);
  auto raw = raw_client::to(server);
  constexpr int holds = 1000;
  std::vector<std::future<void>> taken;
  for (int i = 0; i < holds; ++i) {
    taken.push_back(client.lock("held-" + std::to_string(i))
                        .async_lock(relock::owner::current_thread(), {}, asio::use_future));
  }
  for (auto& t : taken) t.get();
  std::promise<std::size_t> before;
  asio::post(relock::detail::core_of(client)->io(), [&] {
    before.set_value(relock::detail::core_of(client)->watchdog().renewals_sent());
  });
  auto sent_before = before.get_future().get();
  std::this_thread::sleep_for(3200ms);  // a tick or two: a sampling window, not a wait
  std::promise<std::size_t> after;
  asio::post(relock::detail::core_of(client)->io(),
             [&] { after.set_value(relock::detail::core_of(client)->watchdog().renewals_sent()); });
  auto sent = after.get_future().get() - sent_before;
  EXPECT_GE(sent, 10u);       // at least one tick renewed everything...
  EXPECT_LE(sent, 3u * 10u);  // ...in calls of 100 keys: 10 per tick, at most 3 ticks here
                              // (two, or a late tick and its catch-up)
  for (int i = 0; i < holds; ++i) {
    client.lock("held-" + std::to_string(i))
        .async_unlock(relock::owner::current_thread(), asio::use_future)
        .get();
  }
}

TEST(lock_watchdog, a_deleted_key_is_detected_as_lost) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 900ms;
  std::mutex m;
  std::vector<std::string> lost;
  std::vector<std::string> warnings;
  c.on_lock_lost = [&](std::string_view key, std::string_view, std::error_code why) {
    std::lock_guard g(m);
    EXPECT_EQ(why, errc::lock_lost);
    lost.emplace_back(key);
  };
  c.log = [&](relock::log_level level, std::string_view text) {
    std::lock_guard g(m);
    if (level == relock::log_level::warning) warnings.emplace_back(text);
  };
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("stolen");
  std::atomic<bool> owner_told{false};
  relock::lock_options o;
  o.on_lost = [&](std::error_code ec) { owner_told = ec == errc::lock_lost; };
  std::promise<std::error_code> got;
  lk.async_lock(relock::owner::current_thread(), o, [&](std::error_code ec) { got.set_value(ec); });
  ASSERT_FALSE(got.get_future().get());

  raw.command({"DEL", "stolen"});
  EXPECT_TRUE(wait_until([&] { return owner_told.load(); }, 3s));
  {
    std::lock_guard g(m);
    EXPECT_EQ(lost, std::vector<std::string>{"stolen"});
    // The log says which lock, whose hold, what happened and when it was last confirmed.
    bool named = false;
    for (const auto& w : warnings) {
      named =
          named ||
          (w.find("'stolen'") != std::string::npos &&
           w.find(lk.owner_field(relock::owner::current_thread())) != std::string::npos &&
           w.find("gone") != std::string::npos && w.find("last confirmed") != std::string::npos);
    }
    EXPECT_TRUE(named) << "no warning names the lost hold";
  }
  std::error_code ec;
  lk.unlock(ec);
  EXPECT_EQ(ec, errc::lock_lost);
}

TEST(lock_watchdog, a_hold_that_listens_for_loss_hears_a_force_unlock_at_once) {
  redis_server server;
  relock::client client(settings_for(server));  // 30 s lease: the next renewal is 10 s away
  relock::client other(settings_for(server));
  for (bool fixed_lease : {false, true}) {
    auto lk = client.lock("taken-away");
    std::promise<std::error_code> told;
    relock::lock_options o;
    if (fixed_lease) o.lease = 60s;
    o.listen_for_loss = true;
    o.on_lost = [&](std::error_code ec) { told.set_value(ec); };
    const auto me = relock::owner::unique();
    lk.async_lock(me, o, asio::use_future).get();
    const auto start = steady::now();
    ASSERT_TRUE(other.lock("taken-away").force_unlock());
    auto heard = told.get_future();
    ASSERT_EQ(heard.wait_for(5s), std::future_status::ready) << "fixed lease " << fixed_lease;
    EXPECT_EQ(heard.get(), errc::lock_lost);
    EXPECT_LT(steady::now() - start, 3s);
    std::promise<std::error_code> unlocked;
    lk.async_unlock(me, [&](std::error_code e) { unlocked.set_value(e); });
    EXPECT_EQ(unlocked.get_future().get(), errc::lock_lost);
    EXPECT_EQ(watchdog_holds(client), 0u);
  }
  // A hold released normally is not reported, and its subscription goes with it.
  auto lk = client.lock("kept");
  std::atomic<int> lost{0};
  relock::lock_options o;
  o.listen_for_loss = true;
  o.on_lost = [&](std::error_code) { ++lost; };
  const auto me = relock::owner::unique();
  lk.async_lock(me, o, asio::use_future).get();
  lk.async_unlock(me, asio::use_future).get();
  auto raw = raw_client::to(server);
  EXPECT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{kept}"})
                   .elements.at(1)
                   .integer == 0;
      },
      2s));
  EXPECT_EQ(lost.load(), 0);
}

TEST(lock_watchdog, renewals_that_fail_in_an_outage_are_retried_while_the_lease_lasts) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 1500ms;  // a tick every 500 ms
  c.command_timeout = 200ms;  // a renewal during the pause fails fast
  std::atomic<int> lost{0};
  c.on_lock_lost = [&](std::string_view, std::string_view, std::error_code) { ++lost; };
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("outage");
  lk.lock();
  server.pause();  // at least one renewal goes out into the silence and times out
  std::this_thread::sleep_for(700ms);  // the outage itself, not a wait for an outcome
  server.resume();
  // Two more ticks: the hold must still be there, renewed, and never reported lost.
  auto until = steady::now() + 1200ms;
  while (steady::now() < until) {
    ASSERT_EQ(raw.command({"EXISTS", "outage"}).integer, 1) << "the hold expired";
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(raw.command({"PTTL", "outage"}).integer, 500);
  EXPECT_EQ(lost.load(), 0);
  lk.unlock();
}

TEST(lock_watchdog, a_server_unreachable_past_the_lease_is_reported_as_lost) {
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = 600ms;
  c.command_timeout = 200ms;
  std::atomic<int> lost{0};
  c.on_lock_lost = [&](std::string_view, std::string_view, std::error_code why) {
    EXPECT_EQ(why, errc::renewal_failed);  // not "found gone": nobody could look
    ++lost;
  };
  relock::client client(c);
  auto lk = client.lock("unreachable");
  lk.lock();
  server.pause();  // no renewal gets through; the key's lease runs out
  EXPECT_TRUE(wait_until([&] { return lost.load() == 1; }, 3s));
  server.resume();
  std::error_code ec;
  lk.unlock(ec);
  EXPECT_EQ(ec, errc::lock_lost);
}

TEST(lock_watchdog, unlock_racing_renewals_never_leaves_a_released_key_renewed) {
  // Redisson #7272: a renewal entry that outlives its unlock renews the key for ever.
  redis_server server;
  auto c = settings_for(server);
  // A tick every 200 ms, so unlocks land among renewals; long enough that a loaded machine
  // does not let the background hold expire on its own.
  c.watchdog_lease = 600ms;
  std::atomic<int> lost{0};
  c.on_lock_lost = [&](std::string_view, std::string_view, std::error_code) { ++lost; };
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto background = client.lock("background");
  background.lock();  // keeps the watchdog ticking throughout
  for (int i = 0; i < 300; ++i) {
    auto lk = client.lock("racing");
    lk.lock();
    // Spread the unlocks over several ticks (about 2 s in all).
    if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(i % 60));
    lk.unlock();
  }
  EXPECT_EQ(watchdog_holds(client), 1u);  // only "background"
  // Someone else takes the name with a short TTL: no renewal of ours may extend it.
  raw.command({"HSET", "racing", "someone:1", "1"});
  raw.command({"PEXPIRE", "racing", "400"});
  EXPECT_TRUE(wait_until([&] { return raw.command({"EXISTS", "racing"}).integer == 0; }, 3s));
  EXPECT_EQ(lost.load(), 0);
  background.unlock();
  EXPECT_EQ(watchdog_holds(client), 0u);
}

TEST(lock_watchdog, a_killed_holder_frees_the_lock_within_its_lease) {
  redis_server server;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  // Fork before this process has any client (and its I/O thread).
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    try {
      auto c = settings_for(server);
      c.watchdog_lease = 1s;
      relock::client client(c);
      client.lock("crash").lock();
      char ok = 'k';
      if (write(ready[1], &ok, 1) != 1) _exit(2);
      for (;;) pause();
    } catch (...) {
      _exit(3);
    }
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);

  relock::client client(settings_for(server));
  auto lk = client.lock("crash");
  EXPECT_FALSE(lk.try_lock());
  auto killed_at = steady::now();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(lk.try_lock(5s));
  // Not before the renewed lease could have run out, and not long after.
  auto took = steady::now() - killed_at;
  EXPECT_LT(took, 1s + 1500ms);
  lk.unlock();
}
