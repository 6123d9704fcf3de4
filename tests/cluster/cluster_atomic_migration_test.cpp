// SPDX-License-Identifier: Apache-2.0
// Valkey 9's atomic slot migration (CLUSTER MIGRATESLOTS) under relock: the slot's keys move as
// a whole, the target hides them until the cutover, the source pauses writes for it and answers
// MOVED after. A held lock keeps renewing through it; a waiter (sharded or classic pub/sub), a
// semaphore waiter and a take blocked in BLPOP follow the slot and are served on the new owner;
// a release and an acquire caught in the cutover's pause land once each. On a server without
// MIGRATESLOTS (Redis) every case is skipped with the probe's answer.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <sstream>
#include <string>

#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/event_log.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

class cluster_atomic_migration : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster().restore();
    if (auto missing = cluster().atomic_migration_missing(); !missing.empty()) {
      GTEST_SKIP() << missing;
    }
  }
};

// In each pub/sub mode: "sharded" (SSUBSCRIBE on the slot's master) or "classic".
class cluster_atomic_migration_wake : public cluster_atomic_migration,
                                      public ::testing::WithParamInterface<std::string> {};

// The event log, plus the watchdog's renewals and the losses it reported.
class renewal_log : public event_log {
 public:
  void on_renewal(const relock::renewal_event& e) override { ++(e.error ? failed : renewed); }
  void on_loss(const relock::loss_event&) override { ++lost; }
  std::atomic<int> renewed{0}, failed{0}, lost{0};
};

// Connections of `node` blocked in `command` (CLIENT LIST: flag b, cmd=...), of the relock
// client with id `of` when given (its connections' names hold it): a BLPOP waiting for an
// element, or a write waiting out the source's pause at the cutover.
int blocked_in(const cluster_node& node, const std::string& command, const std::string& of = "") {
  std::istringstream lines(cluster().client(node).command({"CLIENT", "LIST"}).str);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    bool blocked = false, running = false, theirs = of.empty();
    std::istringstream fields(line);
    for (std::string f; fields >> f;) {
      if (f.starts_with("flags=") && f.find('b', 6) != std::string::npos) blocked = true;
      if (f == "cmd=" + command) running = true;
      if (f.starts_with("name=") && f.find(":" + of + ":") != std::string::npos) theirs = true;
    }
    n += blocked && running && theirs;
  }
  return n;
}

long long shard_subscribers(const cluster_node& node, const std::string& channel) {
  return cluster().client(node).command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer;
}

// The lock's hash on `node`: [field, count, ...].
relock::resp::reply lock_hash(const cluster_node& node, const std::string& name) {
  return cluster().client(node).command({"HGETALL", name});
}

// The client met MOVED for `slot` and now sends to `to`.
bool heard_slot_moved(const event_log& log, std::uint16_t slot, const cluster_node& to) {
  for (const auto& t : log.topology_changes()) {
    if (t.change == relock::topology_change::slot_moved && t.slot == slot &&
        t.to.ends_with(":" + std::to_string(to.port))) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_F(cluster_atomic_migration, a_held_lock_keeps_renewing_through_the_cutover_on_the_target) {
  auto log = std::make_shared<renewal_log>();
  auto s = cluster_settings();
  s.watchdog_lease = 1s;  // renewed every 333 ms
  s.observer = log;
  relock::client holder(s);
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-held:");
  const auto slot = cluster().slot_of(name);
  auto l = holder.lock(name);
  l.lock();
  ASSERT_TRUE(wait_until([&] { return log->renewed >= 1; }, 3s)) << "no renewal before";
  // Held at the cutover until a renewal waits in the source's pause: it meets the cutover
  // itself, is answered MOVED and goes to the target.
  auto m = cluster().begin_atomic_migration(slot, masters[0], masters[1], cutover_hold::cutover);
  ASSERT_TRUE(wait_until([&] { return blocked_in(masters[0], "evalsha", holder.id()) >= 1; }, 2s))
      << "no renewal came to the cutover";
  cluster().finish_atomic_migration(m);
  // Three leases of renewals after the cutover, on the target. A lapse of more than a lease
  // would have lost the hold.
  const int before = log->renewed;
  ASSERT_TRUE(wait_until([&] { return log->renewed >= before + 9; }, 6s))
      << log->renewed << " renewals, " << log->failed << " failed";
  EXPECT_EQ(log->failed, 0);
  EXPECT_EQ(log->lost, 0);
  auto target = cluster().client(masters[1]);
  EXPECT_GT(target.command({"PTTL", name}).integer, 0) << "not held on the target";
  const auto hash = lock_hash(masters[1], name);
  ASSERT_EQ(hash.elements.size(), 2u) << relock::resp::to_string(hash);
  EXPECT_EQ(hash.elements[1].str, "1");
  EXPECT_TRUE(l.is_held_by_current_thread());
  l.unlock();
  EXPECT_EQ(target.command({"EXISTS", name}).integer, 0);
  EXPECT_TRUE(heard_slot_moved(*log, slot, masters[1]));
}

TEST_P(cluster_atomic_migration_wake, a_waiter_wakes_on_the_new_owner_when_the_holder_releases) {
  auto holder_log = std::make_shared<event_log>();
  auto hs = cluster_settings(GetParam());
  hs.observer = holder_log;
  relock::client holder(hs), waiter(cluster_settings(GetParam()));
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-wake-" + GetParam() + ":");
  const std::string channel = "redisson_lock__channel:{" + name + "}";
  const auto slot = cluster().slot_of(name);
  auto held = holder.lock(name);
  auto wanted = waiter.lock(name);
  const auto holder_id = relock::owner::unique(), waiter_id = relock::owner::unique();
  held.async_lock(holder_id, {}, asio::use_future).get();  // 30 s lease: no wake by expiry
  auto woken = wanted.async_lock(waiter_id, {.wait = 60s}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return subscribers(channel) >= 1; }, 5s));
  cluster().migrate_slot_atomically(slot, masters[0], masters[1]);
  if (GetParam() == "sharded") {
    // The old owner ends the subscription; the waiter's client subscribes on the new one.
    ASSERT_TRUE(wait_until([&] { return shard_subscribers(masters[1], channel) >= 1; }, 5s))
        << "the subscription did not follow the slot";
    EXPECT_EQ(shard_subscribers(masters[0], channel), 0);
  }
  EXPECT_NE(woken.wait_for(0s), std::future_status::ready) << "granted while held";
  const auto released = steady::now();
  held.async_unlock(holder_id, asio::use_future).get();
  ASSERT_EQ(woken.wait_for(5s), std::future_status::ready) << "the waiter did not wake";
  const auto waited = steady::now() - released;
  EXPECT_NO_THROW(woken.get());
  EXPECT_LT(waited, 2s) << "woken by a retry, not by the release's message";
  // Granted once, to the waiter alone, on the new owner.
  const auto hash = lock_hash(masters[1], name);
  ASSERT_EQ(hash.elements.size(), 2u) << relock::resp::to_string(hash);
  EXPECT_EQ(hash.elements[0].str, wanted.owner_field(waiter_id));
  EXPECT_EQ(hash.elements[1].str, "1");
  EXPECT_TRUE(heard_slot_moved(*holder_log, slot, masters[1]));
  wanted.async_unlock(waiter_id, asio::use_future).get();
  EXPECT_FALSE(held.is_locked());
}

INSTANTIATE_TEST_SUITE_P(pubsub, cluster_atomic_migration_wake,
                         ::testing::Values("sharded", "classic"));

TEST_F(cluster_atomic_migration, a_release_and_an_acquire_caught_in_the_cutover_land_once_each) {
  auto holder_log = std::make_shared<event_log>(), contender_log = std::make_shared<event_log>();
  auto hs = cluster_settings(), cs = cluster_settings();
  hs.observer = holder_log;
  cs.observer = contender_log;
  relock::client holder(hs), contender(cs);
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-cutover:");
  const auto slot = cluster().slot_of(name);
  auto held = holder.lock(name);
  auto wanted = contender.lock(name);
  const auto holder_id = relock::owner::unique(), contender_id = relock::owner::unique();
  held.async_lock(holder_id, {}, asio::use_future).get();
  // Held at the cutover: the source pauses writes, the target has been granted the slot.
  auto m = cluster().begin_atomic_migration(slot, masters[0], masters[1], cutover_hold::cutover);
  auto released = held.async_unlock(holder_id, asio::use_future);
  auto acquired = wanted.async_lock(contender_id, {.wait = 30s}, asio::use_future);
  // Both scripts are written and wait in the source's pause, so they meet the cutover itself.
  ASSERT_TRUE(wait_until(
      [&] {
        return blocked_in(masters[0], "evalsha", holder.id()) >= 1 &&
               blocked_in(masters[0], "evalsha", contender.id()) >= 1;
      },
      5s))
      << blocked_in(masters[0], "evalsha") << " scripts wait on the source";
  cluster().finish_atomic_migration(m);
  // The source answered both MOVED (they had not run): each went to the target and ran once.
  ASSERT_EQ(released.wait_for(5s), std::future_status::ready);
  EXPECT_NO_THROW(released.get());
  ASSERT_EQ(acquired.wait_for(5s), std::future_status::ready);
  EXPECT_NO_THROW(acquired.get());
  // Once: the contender's field alone, at 1. The acquire run twice would count 2, the release
  // lost would have left the holder's field (and the contender waiting).
  const auto hash = lock_hash(masters[1], name);
  ASSERT_EQ(hash.elements.size(), 2u) << relock::resp::to_string(hash);
  EXPECT_EQ(hash.elements[0].str, wanted.owner_field(contender_id));
  EXPECT_EQ(hash.elements[1].str, "1");
  EXPECT_EQ(wanted.hold_count(contender_id), 1);
  EXPECT_TRUE(heard_slot_moved(*holder_log, slot, masters[1]));
  EXPECT_TRUE(heard_slot_moved(*contender_log, slot, masters[1]));
  wanted.async_unlock(contender_id, asio::use_future).get();
  EXPECT_EQ(cluster().client(masters[1]).command({"EXISTS", name}).integer, 0);
}

TEST_F(cluster_atomic_migration, a_semaphore_waiter_gets_the_permit_released_on_the_new_owner) {
  relock::client holder(cluster_settings()), waiter(cluster_settings());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-sem:");
  const std::string channel = "redisson_sc:{" + name + "}";
  auto held = holder.semaphore(name);
  ASSERT_TRUE(held.try_set_permits(1));
  ASSERT_TRUE(held.try_acquire());
  auto wanted = waiter.semaphore(name);
  auto granted = wanted.async_acquire(1, 60s, {}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return subscribers(channel) >= 1; }, 5s));
  cluster().migrate_slot_atomically(cluster().slot_of(name), masters[0], masters[1]);
  EXPECT_NE(granted.wait_for(0s), std::future_status::ready) << "granted with no permit";
  const auto released = steady::now();
  held.release();
  ASSERT_EQ(granted.wait_for(5s), std::future_status::ready) << "the waiter did not wake";
  const auto waited = steady::now() - released;
  EXPECT_TRUE(granted.get());
  EXPECT_LT(waited, 2s) << "woken by a retry, not by the release's message";
  auto target = cluster().client(masters[1]);
  EXPECT_EQ(target.command({"GET", name}).str, "0") << "the permit is the waiter's, once";
  wanted.release();
  EXPECT_EQ(target.command({"GET", name}).str, "1");
}

TEST_F(cluster_atomic_migration, a_take_blocked_in_blpop_follows_its_slot_to_the_offer_after) {
  relock::client consumer(cluster_settings()), producer(cluster_settings());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-queue:");
  auto in = consumer.blocking_queue(name);
  auto taken = in.async_take({}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return blocked_in(masters[0], "blpop") >= 1; }, 5s));
  cluster().migrate_slot_atomically(cluster().slot_of(name), masters[0], masters[1]);
  // The source ends the waiting BLPOP with MOVED at the cutover; the take waits on the target.
  ASSERT_TRUE(wait_until([&] { return blocked_in(masters[1], "blpop") >= 1; }, 5s))
      << "the take did not follow the slot";
  EXPECT_EQ(blocked_in(masters[0], "blpop"), 0);
  EXPECT_NE(taken.wait_for(0s), std::future_status::ready);
  const auto offered = steady::now();
  producer.blocking_queue(name).offer("after-the-move");
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  const auto waited = steady::now() - offered;
  EXPECT_EQ(taken.get(), "after-the-move");
  EXPECT_LT(waited, 2s);
  EXPECT_EQ(in.size(), 0);
}

// The fixture's own promise: a migration a failed test left held is cancelled by restore(),
// the slot stays with its source, and the hold's switch is off for the next test.
TEST_F(cluster_atomic_migration, restore_cancels_a_migration_left_held_and_the_slot_stays) {
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "atomic-left:");
  const auto slot = cluster().slot_of(name);
  ASSERT_FALSE(cluster().client(masters[0]).command({"SET", name, "kept"}).is_error());
  for (auto hold : {cutover_hold::streaming, cutover_hold::cutover}) {
    auto m = cluster().begin_atomic_migration(slot, masters[0], masters[1], hold);
    EXPECT_NE(cluster().health_problem(), "");
    cluster().restore();
    EXPECT_EQ(cluster().atomic_migration_state(m), "cancelled");
    EXPECT_EQ(cluster().owner_of(name).port, masters[0].port);
    // Writable again at once: the cutover's pause ended with the migration.
    auto source = cluster().client(masters[0], 1s);
    EXPECT_FALSE(source.command({"SET", name, "kept"}).is_error());
  }
  cluster().migrate_slot_atomically(slot, masters[0], masters[1]);
  EXPECT_EQ(cluster().client(masters[1]).command({"GET", name}).str, "kept");
}
