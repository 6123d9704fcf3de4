// SPDX-License-Identifier: Apache-2.0
// relock's spin lock (client::spin_lock) on a real Redis: the reentrant lock's data without
// pub/sub. It excludes and is excluded by the plain lock on the same name, its waits end by
// their deadline, its waiters never subscribe and its releases never publish.
#include <gtest/gtest.h>

#include <thread>

#include "support/command_stats.hpp"
#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

TEST(spin_lock, excludes_and_is_excluded_by_the_plain_lock_on_its_name) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto spin = client.spin_lock("spin");
  auto plain = client.lock("spin");
  spin.lock();
  EXPECT_EQ(raw.command({"HGET", "spin", my_field(client)}).str, "1");
  EXPECT_FALSE(on_other_thread([&] { return plain.try_lock(); }));
  spin.lock();  // reentrant
  EXPECT_EQ(spin.hold_count(), 2);
  spin.unlock();
  spin.unlock();
  plain.lock();
  EXPECT_FALSE(on_other_thread([&] { return spin.try_lock(); }));
  // A spin waiter hears nothing of the release: it finds the lock free on its next look.
  auto waiter = std::async(std::launch::async, [&] {
    const bool got = spin.try_lock(5s);
    if (got) spin.unlock();
    return got;
  });
  std::this_thread::sleep_for(300ms);  // the waiter is well into its backoff
  const auto released = steady::now();
  plain.unlock();
  EXPECT_TRUE(waiter.get());
  // The backoff caps at 128 ms, plus up to half that of jitter.
  EXPECT_LT(steady::now() - released, 1s);
}

TEST(spin_lock, a_wait_ends_by_its_deadline_and_never_subscribes) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto spin = client.spin_lock("spin");
  spin.lock();
  const auto subscribes = calls_of(raw, "subscribe") + calls_of(raw, "ssubscribe");
  const auto start = steady::now();
  EXPECT_FALSE(on_other_thread([&] { return spin.try_lock(400ms); }));
  const auto took = steady::now() - start;
  EXPECT_GE(took, 400ms);
  EXPECT_LT(took, 400ms + 500ms) << "slept past its deadline";
  EXPECT_EQ(calls_of(raw, "subscribe") + calls_of(raw, "ssubscribe"), subscribes);
  EXPECT_EQ(
      raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{spin}"}).elements.at(1).integer, 0);
  spin.unlock();
}

TEST(spin_lock, its_releases_and_force_unlock_publish_nothing) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto spin = client.spin_lock("spin");
  const auto publishes = calls_of(raw, "publish") + calls_of(raw, "spublish");
  spin.lock();
  spin.unlock();
  spin.lock();
  EXPECT_TRUE(spin.force_unlock());
  EXPECT_EQ(raw.command({"EXISTS", "spin"}).integer, 0);
  EXPECT_EQ(calls_of(raw, "publish") + calls_of(raw, "spublish"), publishes);
  // A plain lock's release on the same name still publishes, as ever.
  client.lock("spin").lock();
  client.lock("spin").unlock();
  EXPECT_GT(calls_of(raw, "publish") + calls_of(raw, "spublish"), publishes);
}

TEST(spin_lock, a_constant_backoff_is_a_setting_and_a_bad_one_is_refused) {
  redis_server server;
  auto settings = settings_for(server);
  settings.spin_backoff = relock::backoff::constant(20ms);
  relock::client client(settings);
  auto spin = client.spin_lock("spin");
  spin.lock();
  EXPECT_FALSE(on_other_thread([&] { return spin.try_lock(100ms); }));
  spin.unlock();

  settings.spin_backoff = relock::backoff::exponential(50ms, 10ms);
  EXPECT_EQ(error_of([&] { relock::client bad(settings); }), errc::invalid_argument);
  settings.spin_backoff = relock::backoff::constant(0ms);
  EXPECT_EQ(error_of([&] { relock::client bad(settings); }), errc::invalid_argument);
  settings.spin_backoff = relock::backoff::exponential(1ms, std::chrono::milliseconds::max());
  EXPECT_EQ(error_of([&] { relock::client bad(settings); }), errc::invalid_argument);
}

// The last sleep is cut short by the deadline; a release during it is seen by one last look.
TEST(spin_lock, a_release_during_the_last_sleep_is_seen_at_the_deadline) {
  redis_server server;
  auto settings = settings_for(server);
  settings.spin_backoff = relock::backoff::constant(1s);
  relock::client client(settings);
  auto spin = client.spin_lock("spin");
  spin.lock();
  auto waiter = std::async(std::launch::async, [&] {
    const bool got = spin.try_lock(1500ms);  // tries at 0, then sleeps 1 s to 1.5 s: the deadline
    if (got) spin.unlock();
    return got;
  });
  std::this_thread::sleep_for(1200ms);  // into the last sleep
  spin.unlock();
  EXPECT_TRUE(waiter.get());
}
