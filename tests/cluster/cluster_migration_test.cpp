// A slot migrating live under held locks and waiters (CLUSTER SETSLOT IMPORTING / MIGRATING,
// MIGRATE, SETSLOT NODE, one step at a time): renewals follow ASK so no hold expires, a release
// waits out TRYAGAIN, waiters still wake by message, nothing is granted twice.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include <relock/client.hpp>

#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

class cluster_migration : public ::testing::Test {
 protected:
  void SetUp() override { cluster().restore(); }
  static redis_cluster& cluster() { return shared_cluster(); }
  static relock::config settings(std::chrono::milliseconds lease = 30s) {
    relock::config c;
    c.url = cluster().seed_url();
    c.watchdog_lease = lease;
    return c;
  }
  static std::string name_on(const cluster_node& master, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string name = prefix + std::to_string(i);
      if (cluster().owner_of(name).port == master.port) return name;
    }
  }
};

}  // namespace

TEST_F(cluster_migration, renewals_follow_ask_and_a_hold_outlives_several_leases_mid_migration) {
  relock::client holder(settings(1s));
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
  // The waiter is subscribed (classic pub/sub: on whichever node its client listens).
  ASSERT_TRUE(wait_until(
      [&] {
        long long n = 0;
        for (const auto& node : cluster().masters()) {
          n += cluster()
                   .client(node)
                   .command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}"})
                   .elements.at(1)
                   .integer;
        }
        return n >= 1;
      },
      5s));
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
