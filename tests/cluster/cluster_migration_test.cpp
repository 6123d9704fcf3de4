// SPDX-License-Identifier: Apache-2.0
// A slot migrating live under held locks and waiters (CLUSTER SETSLOT IMPORTING / MIGRATING,
// MIGRATE, SETSLOT NODE, one step at a time): renewals follow ASK so no hold expires, a release
// waits out TRYAGAIN, waiters still wake by message, nothing is granted twice.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/event_log.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

class cluster_migration : public ::testing::Test {
 protected:
  void SetUp() override { cluster().restore(); }
  static relock::config settings(std::chrono::milliseconds lease = 30s) {
    relock::config c;
    c.url = cluster().seed_url();
    c.watchdog_lease = lease;
    return c;
  }
};

}  // namespace

TEST_F(cluster_migration, renewals_follow_ask_and_a_hold_outlives_several_leases_mid_migration) {
  auto s = settings(1s);
  auto log = std::make_shared<relock::test::event_log>();
  s.observer = log;
  relock::client holder(s);
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "migrating:");
  auto l = holder.lock(name);
  l.lock();  // renewed every 333 ms
  auto m = cluster().begin_migration(cluster().slot_of(name), masters[0], masters[1]);
  ASSERT_EQ(cluster().move_keys(m), 1u);  // the lock's key now lives on the target
  // The source answers ASK for it; three leases later the hold is still there, renewed on the
  // target behind ASKING.
  const auto until = steady::now() + 3s;
  while (steady::now() < until) std::this_thread::sleep_for(300ms);  // no outcome to wait for
  auto target = cluster().client(masters[1]);
  target.command({"ASKING"});
  EXPECT_EQ(target.command({"EXISTS", name}).integer, 1) << "the hold expired mid-migration";
  cluster().finish_migration(m);
  EXPECT_TRUE(l.is_held_by_current_thread());
  l.unlock();
  EXPECT_FALSE(l.is_locked());
  // The first command for the slot after the migration met MOVED, and the observer heard it.
  const auto moves = log->topology_changes();
  ASSERT_FALSE(moves.empty());
  EXPECT_EQ(moves.front().change, relock::topology_change::slot_moved);
  EXPECT_EQ(moves.front().slot, cluster().slot_of(name));
  EXPECT_NE(moves.front().to.find(":" + std::to_string(masters[1].port)), std::string::npos)
      << moves.front().to;
}

TEST_F(cluster_migration, a_release_waits_out_tryagain_and_its_waiter_wakes_by_message) {
  relock::client holder(settings()), waiter(settings());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "handoff:");
  // The holder's thread takes the lock, and releases it when told to.
  std::promise<void> locked, release;
  auto released = std::async(std::launch::async, [&] {
    auto l = holder.lock(name);
    l.lock();
    locked.set_value();
    release.get_future().wait();
    std::error_code ec;
    l.unlock(ec);
    return ec;
  });
  locked.get_future().wait();
  std::atomic<bool> got{false};
  std::thread t([&] {
    auto w = waiter.lock(name);
    w.lock();
    got = true;
    w.unlock();
  });
  // The waiter is subscribed: sharded (the default on Redis 7), on the slot's master.
  const std::string channel = "redisson_lock__channel:{" + name + "}";
  ASSERT_TRUE(wait_until([&] { return subscribers(channel) >= 1; }, 5s));
  auto m = cluster().begin_migration(cluster().slot_of(name), masters[0], masters[1]);
  ASSERT_EQ(cluster().move_keys(m), 1u);
  // The release script names the lock, its channel's slot-mates and a latch: a multi-key script
  // on a migrating slot gets TRYAGAIN until the migration ends.
  release.set_value();
  EXPECT_NE(released.wait_for(500ms), std::future_status::ready) << "it ran mid-migration?";
  cluster().finish_migration(m);
  ASSERT_EQ(released.wait_for(5s), std::future_status::ready);
  const auto ec = released.get();
  EXPECT_FALSE(ec) << ec.message();
  ASSERT_TRUE(wait_until([&] { return got.load(); }, 5s)) << "the waiter did not wake";
  t.join();
  EXPECT_FALSE(holder.lock(name).is_locked());
}

TEST_F(cluster_migration, a_sharded_waiter_follows_its_channel_to_the_new_owner_and_wakes_there) {
  relock::client holder(cluster_settings("sharded")), waiter(cluster_settings("sharded"));
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "follow:");
  const std::string channel = "redisson_lock__channel:{" + name + "}";
  std::promise<void> locked, release;
  auto held = std::async(std::launch::async, [&] {
    auto l = holder.lock(name);
    l.lock();  // 30 s lease: a wake by TTL would take that long
    locked.set_value();
    release.get_future().wait();
    l.unlock();
  });
  locked.get_future().wait();
  std::atomic<bool> got{false};
  std::thread t([&] {
    auto w = waiter.lock(name);
    w.lock();
    got = true;
    w.unlock();
  });
  auto shard_subscribers = [&](const cluster_node& node) {
    return cluster()
        .client(node)
        .command({"PUBSUB", "SHARDNUMSUB", channel})
        .elements.at(1)
        .integer;
  };
  ASSERT_TRUE(wait_until([&] { return shard_subscribers(masters[0]) >= 1; }, 5s));
  // The slot moves: the old owner ends the subscription (an unsolicited sunsubscribe), and the
  // waiter's client subscribes again on the new owner.
  cluster().migrate_slot(cluster().slot_of(name), masters[0], masters[1]);
  ASSERT_TRUE(wait_until([&] { return shard_subscribers(masters[1]) >= 1; }, 5s))
      << "the subscription did not follow the slot";
  EXPECT_EQ(shard_subscribers(masters[0]), 0);
  EXPECT_FALSE(got.load());  // woken once to try again, and still waiting: the lock is held
  const auto released = steady::now();
  release.set_value();
  held.get();
  ASSERT_TRUE(wait_until([&] { return got.load(); }, 5s));
  EXPECT_LT(steady::now() - released, 2s) << "woke on the message from the new owner";
  t.join();
}
