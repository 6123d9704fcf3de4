// SPDX-License-Identifier: Apache-2.0
// relock's fair lock (client::fair_lock) on a real Redis: FIFO across threads and processes,
// waiters that died are skipped, waiters that give up leave no trace and hand the turn on, live
// waiters keep their place however long the holder keeps the lock, re-entry and the
// non-reentrant variant. (fair_scripts_test.cpp feeds the scripts broken queues;
// tests/interop/fair_interop_test.cpp interleaves Redisson's waiters.)
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <stop_token>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/command_stats.hpp"
#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

const std::string queue_key = "redisson_lock_queue:{fair}";
const std::string timeout_key = "redisson_lock_timeout:{fair}";

std::vector<std::string> queue_of(raw_client& raw) {
  std::vector<std::string> owners;
  for (auto& e : raw.command({"LRANGE", queue_key, "0", "-1"}).elements) owners.push_back(e.str);
  return owners;
}

long long queued(raw_client& raw) { return raw.command({"LLEN", queue_key}).integer; }

bool queue_is_clean(raw_client& raw) {
  return raw.command({"EXISTS", queue_key}).integer == 0 &&
         raw.command({"EXISTS", timeout_key}).integer == 0;
}

relock::config with_queue_timeout(const redis_server& server, std::chrono::milliseconds t) {
  auto s = settings_for(server);
  s.fair_lock_wait_timeout = t;
  return s;
}

// A waiter of `lock` as `who`, started now: its future is ready once it holds the lock.
std::future<void> wait_for_turn(relock::mutex& lock, relock::owner who) {
  return lock.async_lock(who, {}, asio::use_future);
}

// The error an async lock ends with, as a plain value: asio::use_future would carry it as an
// exception, whose reference count libstdc++ updates where TSan cannot see (a false data race).
std::future<std::error_code> lock_outcome(relock::mutex& lock, relock::lock_options o) {
  auto done = std::make_shared<std::promise<std::error_code>>();
  auto outcome = done->get_future();
  lock.async_lock(relock::owner::unique(), std::move(o),
                  [done](std::error_code ec) { done->set_value(ec); });
  return outcome;
}

}  // namespace

TEST(fair_lock, writes_redissons_data_and_a_release_tells_the_head_alone) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock();
  EXPECT_EQ(raw.command({"HGET", "fair", my_field(client)}).str, "1");

  // Two waiters queue, head first, each with a deadline; each listens on its own channel.
  const std::vector<relock::owner> who{relock::owner::unique(), relock::owner::unique()};
  std::vector<std::string> owners;
  std::vector<std::future<void>> waiters;
  for (std::size_t i = 0; i < who.size(); ++i) {
    owners.push_back(lock.owner_field(who[i]));
    waiters.push_back(wait_for_turn(lock, who[i]));
    ASSERT_TRUE(wait_until([&] { return queued(raw) == static_cast<long long>(i + 1); }, 5s));
  }
  EXPECT_EQ(queue_of(raw), owners);
  for (const auto& o : owners) {
    EXPECT_FALSE(raw.command({"ZSCORE", timeout_key, o}).is_nil()) << o;
    ASSERT_TRUE(
        wait_until([&] { return subscribed(raw, "redisson_lock__channel:{fair}:" + o); }, 5s));
  }
  // The second waiter's deadline comes after the first's.
  EXPECT_LT(std::stoll(raw.command({"ZSCORE", timeout_key, owners[0]}).str),
            std::stoll(raw.command({"ZSCORE", timeout_key, owners[1]}).str));

  lock.unlock();
  ASSERT_EQ(waiters[0].wait_for(5s), std::future_status::ready);
  waiters[0].get();
  EXPECT_EQ(raw.command({"HGET", "fair", owners[0]}).str, "1");
  EXPECT_EQ(queue_of(raw), std::vector<std::string>{owners[1]});
  EXPECT_EQ(waiters[1].wait_for(200ms), std::future_status::timeout) << "only the head was told";

  lock.async_unlock(who[0], asio::use_future).get();
  ASSERT_EQ(waiters[1].wait_for(5s), std::future_status::ready);
  waiters[1].get();
  lock.async_unlock(who[1], asio::use_future).get();
  EXPECT_TRUE(queue_is_clean(raw));
  EXPECT_EQ(raw.command({"EXISTS", "fair"}).integer, 0);
}

// Six waiters in three processes, two threads each, queue in an order the test dictates (the
// processes take turns); they must get the lock in exactly that order.
TEST(fair_lock, waiters_of_three_processes_get_the_lock_in_the_order_they_queued) {
  redis_server server;
  constexpr int processes = 3, threads_each = 2;
  std::vector<pid_t> children;
  std::vector<int> go;  // per child: the test writes a byte to start one of its waiters
  for (int p = 0; p < processes; ++p) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    children.push_back(fork_child([&] {
      close(fds[1]);
      relock::client c(settings_for(server));
      std::vector<std::thread> waiters;
      for (int t = 0; t < threads_each; ++t) {
        char id = 0;
        if (read(fds[0], &id, 1) != 1) break;
        waiters.emplace_back([&c, &server, id] {
          auto l = c.fair_lock("fair");
          l.lock();
          raw_client::to(server).command({"RPUSH", "order", std::string(1, id)});
          std::this_thread::sleep_for(1ms);  // a hold, as a real critical section
          l.unlock();
        });
      }
      for (auto& w : waiters) w.join();
      return waiters.size() == threads_each ? 0 : 2;
    }));
    ASSERT_GT(children.back(), 0);
    close(fds[0]);
    go.push_back(fds[1]);
  }

  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock();
  std::string expected;
  for (int t = 0; t < threads_each; ++t) {
    for (int p = 0; p < processes; ++p) {
      const char id = static_cast<char>('a' + expected.size());
      ASSERT_EQ(write(go[p], &id, 1), 1);
      expected += id;
      ASSERT_TRUE(
          wait_until([&] { return queued(raw) == static_cast<long long>(expected.size()); }, 10s))
          << "waiter " << id << " did not queue";
    }
  }
  lock.unlock();
  ASSERT_TRUE(wait_until([&] { return raw.command({"LLEN", "order"}).integer == 6; }, 20s));
  std::string order;
  for (auto& e : raw.command({"LRANGE", "order", "0", "-1"}).elements) order += e.str;
  EXPECT_EQ(order, expected);
  for (int fd : go) close(fd);
  expect_children_succeed(children);
  EXPECT_TRUE(queue_is_clean(raw));
}

// A waiter SIGKILLed in the queue holds up those behind it until its deadline (the queue
// timeout after its last try), then it is dropped and the next one gets the lock.
TEST(fair_lock, a_waiter_killed_in_the_queue_is_skipped_once_its_deadline_passes) {
  redis_server server;
  constexpr auto queue_timeout = 1500ms;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork_child([&] {
    close(go[1]);
    relock::client c(with_queue_timeout(server, queue_timeout));
    auto l = c.fair_lock("fair");
    char held = 0;
    if (read(go[0], &held, 1) != 1) return 2;
    l.lock();  // queues behind the test's hold; killed while it waits
    return 3;
  });
  ASSERT_GT(child, 0);
  close(go[0]);

  relock::client client(with_queue_timeout(server, queue_timeout));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock(2s);
  const char held = 'h';  // only now may the child ask: it must queue behind this hold
  ASSERT_EQ(write(go[1], &held, 1), 1);
  close(go[1]);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 1; }, 5s));
  const std::string dead = queue_of(raw).front();
  ASSERT_TRUE(
      wait_until([&] { return subscribed(raw, "redisson_lock__channel:{fair}:" + dead); }, 5s));
  const auto me = relock::owner::unique();
  auto waiter = wait_for_turn(lock, me);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 2; }, 5s));

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const auto deadline_ms = std::stoll(raw.command({"ZSCORE", timeout_key, dead}).str);
  lock.unlock();  // tells the dead head: nobody hears
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << "stuck behind a dead waiter";
  waiter.get();
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_GE(now_ms + 50, deadline_ms) << "the dead waiter was skipped before its deadline";
  EXPECT_EQ(raw.command({"HGET", "fair", lock.owner_field(me)}).str, "1");
  lock.async_unlock(me, asio::use_future).get();
  EXPECT_TRUE(queue_is_clean(raw));
}

// A fleet crashed with waiters queued (redisson/redisson#4661): their deadlines lie up to
// minutes ahead, one wait timeout apart. A newcomer finds the lock free and tells the head; a
// head nobody listens for is dropped once fair_lock_unheard_head_timeout passes without a try
// from it, so the newcomer waits that long per dead waiter, not the wait timeout.
TEST(fair_lock, a_queue_of_dead_waiters_clears_in_the_unheard_timeout_per_waiter) {
  redis_server server;
  auto settings = with_queue_timeout(server, 60s);
  settings.fair_lock_unheard_head_timeout = 300ms;
  relock::client client(settings);
  auto raw = raw_client::to(server);
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (int i = 1; i <= 3; ++i) {
    const std::string dead = "crashed:" + std::to_string(i);
    raw.command({"RPUSH", queue_key, dead});
    raw.command({"ZADD", timeout_key, std::to_string(now_ms + i * 60'000), dead});
  }
  auto lock = client.fair_lock("fair");
  const auto start = steady::now();
  ASSERT_TRUE(lock.try_lock(10s)) << "still behind the dead";
  const auto took = steady::now() - start;
  EXPECT_GE(took, 3 * 300ms);
  EXPECT_LT(took, 5s);
  EXPECT_TRUE(queue_is_clean(raw));
  lock.unlock();
}

// Giving up, from each way a wait can end, removes the waiter from the queue and the deadlines
// at once; the waiter behind keeps its place.
TEST(fair_lock, a_waiter_that_gives_up_leaves_no_trace_and_those_behind_keep_their_place) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock();
  const auto last = relock::owner::unique();
  auto& me = lock;

  auto expect_only_last_queued = [&](const char* how) {
    EXPECT_TRUE(wait_until([&] { return queued(raw) == 1; }, 5s)) << how;
    EXPECT_EQ(queue_of(raw), std::vector<std::string>{me.owner_field(last)}) << how;
    EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 1) << how;
  };
  // Queue a waiter, then `last` behind it, then make the first give up by `give_up`.
  auto give_up_ahead_of_last = [&](auto start_waiter, auto give_up) {
    auto first = start_waiter();
    EXPECT_TRUE(wait_until([&] { return queued(raw) >= 1; }, 5s));
    auto behind = wait_for_turn(lock, last);
    EXPECT_TRUE(wait_until([&] { return queued(raw) == 2; }, 5s));
    give_up(first);
    return behind;
  };

  // Its wait runs out.
  {
    auto behind = give_up_ahead_of_last(
        [&] {
          return std::async(std::launch::async, [&] {
            relock::lock_options o;
            o.wait = 2s;
            return lock.async_try_lock(relock::owner::unique(), o, asio::use_future).get();
          });
        },
        [](auto& first) { EXPECT_FALSE(first.get()); });
    expect_only_last_queued("timeout");
    lock.force_unlock();
    ASSERT_EQ(behind.wait_for(5s), std::future_status::ready);
    lock.async_unlock(last, asio::use_future).get();
    lock.lock();
  }
  // Its stop_token.
  {
    std::stop_source stop;
    auto behind = give_up_ahead_of_last(
        [&] {
          relock::lock_options o;
          o.stop = stop.get_token();
          return lock_outcome(lock, o);
        },
        [&](auto& first) {
          stop.request_stop();
          EXPECT_EQ(first.get(), errc::cancelled);
        });
    expect_only_last_queued("stop_token");
    lock.force_unlock();
    ASSERT_EQ(behind.wait_for(5s), std::future_status::ready);
    lock.async_unlock(last, asio::use_future).get();
    lock.lock();
  }
  // Its client is destroyed.
  {
    auto other = std::make_unique<relock::client>(settings_for(server));
    auto behind = give_up_ahead_of_last(
        [&] {
          auto theirs = other->fair_lock("fair");
          return lock_outcome(theirs, {});
        },
        [&](auto& first) {
          other.reset();
          EXPECT_EQ(first.get(), errc::cancelled);
        });
    expect_only_last_queued("client destroyed");
    lock.unlock();
    ASSERT_EQ(behind.wait_for(5s), std::future_status::ready);
    lock.async_unlock(last, asio::use_future).get();
  }
  EXPECT_TRUE(queue_is_clean(raw));
}

// The lock went free without a word (an expiry, a DEL): the head sleeps until the holder's TTL
// would have run out. When it gives up meanwhile, the waiter behind is told at once; with
// Redisson it would sleep on too.
TEST(fair_lock, a_head_that_gives_up_while_the_lock_is_free_hands_the_turn_on_at_once) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  raw.command({"HSET", "fair", "someone:1", "1"});
  raw.command({"PEXPIRE", "fair", "60000"});
  relock::lock_options short_wait;
  short_wait.wait = 3s;
  const auto scripts_before = scripts_answered(raw);
  auto head = lock.async_try_lock(relock::owner::unique(), short_wait, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 1; }, 5s));
  const auto next = relock::owner::unique();
  auto behind = wait_for_turn(lock, next);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 2; }, 5s));
  // Both have tried twice (once more after subscribing) and sleep: the head's second try,
  // landing after the DEL below, would find the lock free and take it.
  ASSERT_TRUE(wait_until([&] { return scripts_answered(raw) - scripts_before >= 4; }, 5s));
  raw.command({"DEL", "fair"});  // free, and nobody told

  EXPECT_FALSE(head.get());
  const auto gave_up = steady::now();
  // Told by the give-up; left to its timer it would sleep out the 60 s the holder had left.
  ASSERT_EQ(behind.wait_for(5s), std::future_status::ready);
  EXPECT_LT(steady::now() - gave_up, 2s);
  behind.get();
  EXPECT_EQ(raw.command({"HGET", "fair", lock.owner_field(next)}).str, "1");
  lock.async_unlock(next, asio::use_future).get();
  EXPECT_TRUE(queue_is_clean(raw));
}

// With a queue timeout shorter than the hold, Redisson's waiters would be taken for dead and
// lose their place; relock's refresh their deadline on every try, so the order holds.
TEST(fair_lock, live_waiters_keep_their_place_however_long_the_holder_holds) {
  redis_server server;
  auto settings = with_queue_timeout(server, 2500ms);
  settings.watchdog_lease = 1500ms;  // waiters look again at least every 1.5 s
  relock::client client(settings);
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock();
  std::vector<relock::owner> who{relock::owner::unique(), relock::owner::unique()};
  std::vector<std::future<void>> waiters;
  for (std::size_t i = 0; i < who.size(); ++i) {
    waiters.push_back(wait_for_turn(lock, who[i]));
    ASSERT_TRUE(wait_until([&] { return queued(raw) == static_cast<long long>(i + 1); }, 5s));
  }
  std::this_thread::sleep_for(6s);  // the hold itself: well past every first deadline
  EXPECT_EQ(queue_of(raw),
            (std::vector<std::string>{lock.owner_field(who[0]), lock.owner_field(who[1])}));
  lock.unlock();
  ASSERT_EQ(waiters[0].wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiters[1].wait_for(100ms), std::future_status::timeout);
  lock.async_unlock(who[0], asio::use_future).get();
  ASSERT_EQ(waiters[1].wait_for(5s), std::future_status::ready);
  lock.async_unlock(who[1], asio::use_future).get();
  EXPECT_TRUE(queue_is_clean(raw));
}

TEST(fair_lock, an_owner_that_waits_again_soon_finds_its_channel_listening_and_tries_once) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  const auto waiter = relock::owner::unique();
  const std::string own_channel = "redisson_lock__channel:{fair}:" + lock.owner_field(waiter);
  auto listeners = [&] {
    return raw.command({"PUBSUB", "NUMSUB", own_channel}).elements.at(1).integer;
  };
  lock.lock();
  auto first = wait_for_turn(lock, waiter);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 1 && listeners() == 1; }, 5s));
  lock.unlock();
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  lock.async_unlock(waiter, asio::use_future).get();
  EXPECT_EQ(listeners(), 1) << "its channel stays a while after its wait";

  // Waiting again: it joins its channel, still confirmed, and tries once; no second try.
  lock.lock();
  raw.command({"CONFIG", "RESETSTAT"});
  auto second = wait_for_turn(lock, waiter);
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 1; }, 5s));
  lock.unlock();
  ASSERT_EQ(second.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(scripts_answered(raw), 3) << "its try, the release, its try when told";
  EXPECT_EQ(calls_of(raw, "subscribe"), 0);
  lock.async_unlock(waiter, asio::use_future).get();
  // Then, with nobody waiting, the channel goes.
  EXPECT_TRUE(wait_until([&] { return listeners() == 0; }, 5s));
  EXPECT_TRUE(queue_is_clean(raw));
}

TEST(fair_lock, the_holder_reenters_and_a_try_without_wait_never_queues) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.fair_lock("fair");
  lock.lock();
  EXPECT_TRUE(lock.try_lock());
  EXPECT_EQ(lock.hold_count(), 2);
  EXPECT_FALSE(on_other_thread([&] { return lock.try_lock(); }));
  EXPECT_EQ(queued(raw), 0) << "a single try joined the queue";
  auto waiter = wait_for_turn(lock, relock::owner::unique());
  ASSERT_TRUE(wait_until([&] { return queued(raw) == 1; }, 5s));
  lock.unlock();
  EXPECT_EQ(waiter.wait_for(200ms), std::future_status::timeout) << "still held once";
  lock.unlock();
  ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
}

TEST(fair_lock, the_non_reentrant_variant_refuses_its_holder_and_changes_nothing) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lock = client.non_reentrant_fair_lock("fair");
  lock.lock();
  EXPECT_EQ(error_of([&] { lock.lock(); }), errc::non_reentrant);
  EXPECT_EQ(error_of([&] { (void)lock.try_lock(); }), errc::non_reentrant);
  EXPECT_EQ(lock.hold_count(), 1);
  EXPECT_TRUE(queue_is_clean(raw));
  lock.unlock();
  EXPECT_EQ(raw.command({"EXISTS", "fair"}).integer, 0);
}
