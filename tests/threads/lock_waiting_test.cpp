// SPDX-License-Identifier: Apache-2.0
// Waiting: woken by messages (pub/sub), bounded by deadlines, never leaking subscriptions.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <asio/post.hpp>
#include <asio/use_future.hpp>

#include "support/lock_env.hpp"
#include "support/raw_subscriber.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

TEST(lock_waiting, try_lock_gives_up_within_its_wait) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("busy");
  lk.lock();
  auto started = steady::now();
  bool got = on_other_thread([&] { return lk.try_lock(300ms); });
  auto took = steady::now() - started;
  EXPECT_FALSE(got);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
  lk.unlock();
}

TEST(lock_waiting, a_waiter_wakes_on_unlock_long_before_the_lease_ends) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("handoff");
  lk.lock(30s);  // if the waiter polled on the TTL it would wait 30 s

  std::promise<steady::time_point> acquired_at;
  std::thread waiter([&] {
    lk.lock();
    acquired_at.set_value(steady::now());
    lk.unlock();
  });
  // The waiter is queued once its client subscribed to the lock's channel.
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{handoff}"})
                   .elements.at(1)
                   .integer == 1;
      },
      5s));
  auto released_at = steady::now();
  lk.unlock();
  auto f = acquired_at.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_LT(f.get() - released_at, 1s);
  waiter.join();
}

// One client's waiters are served in the order they came: a thread that unlocks and locks again
// at once queues behind the waiter its release woke, instead of taking the lock back first
// (before the rule, it did so in about one round of five).
TEST(lock_waiting, a_thread_that_locks_again_goes_behind_the_waiter_its_unlock_woke) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("queue-behind");
  const auto subscribers = [&] {
    return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{queue-behind}"})
        .elements.at(1)
        .integer;
  };
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::mutex order_mutex;
    std::vector<char> order;
    lk.lock();
    std::thread waiter([&] {
      lk.lock();
      {
        std::scoped_lock hold(order_mutex);
        order.push_back('W');
      }
      lk.unlock();
    });
    // Queued once its client has subscribed (the last round's subscription is gone: below).
    ASSERT_TRUE(wait_until([&] { return subscribers() == 1; }, 5s));
    lk.lock();  // a re-entry never waits behind anybody
    lk.unlock();
    lk.unlock();
    lk.lock();
    {
      std::scoped_lock hold(order_mutex);
      order.push_back('M');
    }
    lk.unlock();
    waiter.join();
    EXPECT_EQ(order, (std::vector<char>{'W', 'M'}));
    ASSERT_TRUE(wait_until([&] { return subscribers() == 0; }, 5s));
  }
}

TEST(lock_waiting, unlock_publishes_zero_on_redissons_channel) {
  redis_server server;
  relock::client client(settings_for(server));
  raw_subscriber listener(server, "redisson_lock__channel:{pub}");
  auto lk = client.lock("pub");
  lk.lock();
  lk.lock();
  lk.unlock();  // still held: nothing published
  lk.unlock();
  EXPECT_EQ(listener.next(2s), "0");
}

TEST(lock_waiting, a_foreign_release_message_wakes_a_waiter) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  // Another client (a Redisson process) holds the lock for a long time.
  raw.command({"HSET", "foreign", "8a7d4f2e-0000-4000-8000-000000000001:57", "1"});
  raw.command({"PEXPIRE", "foreign", "60000"});
  auto lk = client.lock("foreign");
  EXPECT_FALSE(lk.try_lock());

  auto waiting = std::async(std::launch::async, [&] { return lk.try_lock(20s); });
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{foreign}"})
                   .elements.at(1)
                   .integer == 1;
      },
      5s));
  auto released_at = steady::now();
  raw.command({"DEL", "foreign"});
  raw.command({"PUBLISH", "redisson_lock__channel:{foreign}", "0"});
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_LT(steady::now() - released_at, 2s);
}

TEST(lock_waiting, force_unlock_wakes_waiters) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("forced");
  lk.lock(60s);
  auto waiting = std::async(std::launch::async, [&] {
    bool got = lk.try_lock(30s);
    if (got) lk.unlock();
    return got;
  });
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{forced}"})
                   .elements.at(1)
                   .integer == 1;
      },
      5s));
  auto forced_at = steady::now();
  EXPECT_TRUE(on_other_thread([&] { return client.lock("forced").force_unlock(); }));
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_LT(steady::now() - forced_at, 2s);
  EXPECT_FALSE(lk.force_unlock());  // nothing left to delete
}

TEST(lock_waiting, a_stop_token_cancels_a_wait) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("cancel");
  lk.lock();
  std::stop_source stop;
  auto waiting = std::async(std::launch::async, [&] {
    try {
      lk.lock(stop.get_token());
      return std::error_code();
    } catch (const relock::error& e) {
      return e.code();
    }
  });
  EXPECT_EQ(waiting.wait_for(300ms), std::future_status::timeout);  // it really waits
  stop.request_stop();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  lk.unlock();
  EXPECT_FALSE(lk.is_locked());
}

TEST(lock_waiting, ten_thousand_distinct_names_leave_no_subscription_behind) {
  redis_server server;
  auto settings = settings_for(server);
  // Some 40,000 commands go out at once. Under ASan beside other tests, replies to the last of
  // them came after the 3 s default, and those waits failed with a timeout: true of an
  // overloaded client, but not what this test is about.
  settings.command_timeout = 60s;
  relock::client client(settings);
  auto raw = raw_client::to(server);
  constexpr int names = 10'000;
  // Someone else holds every one of them.
  raw.command({"EVAL",
               "for i = 1, tonumber(ARGV[1]) do redis.call('hset', 'n' .. i, 'other:1', 1); "
               "redis.call('pexpire', 'n' .. i, 60000) end",
               "0", std::to_string(names)});

  std::vector<std::future<bool>> waits;
  waits.reserve(names);
  for (int i = 1; i <= names; ++i) {
    relock::lock_options o;
    o.wait = 50ms;  // long enough to subscribe, short enough to give up
    waits.push_back(client.lock("n" + std::to_string(i))
                        .async_try_lock(relock::owner::unique(), o, asio::use_future));
  }
  int acquired = 0;
  for (auto& w : waits) acquired += w.get() ? 1 : 0;
  EXPECT_EQ(acquired, 0);

  auto leftovers = [&] {
    std::promise<std::pair<std::size_t, std::size_t>> p;
    asio::post(relock::detail::core_of(client)->io(), [&] {
      p.set_value({relock::detail::core_of(client)->subscriber().channel_count(),
                   relock::detail::core_of(client)->waiters().queue_count()});
    });
    return p.get_future().get();
  };
  EXPECT_TRUE(wait_until(
      [&] {
        return leftovers() == std::pair<std::size_t, std::size_t>{0, 0};
      },
      20s));
  EXPECT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "CHANNELS"}).elements.empty();
      },
      20s));
}

TEST(lock_waiting, polling_or_not_the_io_thread_hands_off_between_threads_and_stops_cleanly) {
  redis_server server;
  for (auto poll : {0us, 200us}) {  // config::busy_poll off, and on (the default is on)
    auto c = settings_for(server);
    c.busy_poll = poll;
    c.command_connections = 2;
    std::atomic<int> inside{0}, overlaps{0}, total{0};
    {
      relock::client client(c);
      std::vector<std::thread> threads;
      for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
          auto lk = client.lock("polled");
          for (int i = 0; i < 50; ++i) {
            std::lock_guard hold(lk);
            if (inside.fetch_add(1) != 0) ++overlaps;
            ++total;
            inside.fetch_sub(1);
          }
        });
      }
      for (auto& t : threads) t.join();
    }  // the I/O thread must end here, polling or not, or this test hangs
    EXPECT_EQ(total.load(), 200) << poll.count();
    EXPECT_EQ(overlaps.load(), 0) << poll.count();
  }
}
