// SPDX-License-Identifier: Apache-2.0
// The fair, fenced and spin locks on the shared Redis Cluster, in each pub/sub mode: their
// scripts touch several keys and a channel built in Lua (a fair waiter's own), all in the
// name's slot; a fair release must reach the head waiter on the master that owns that slot.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include <asio/use_future.hpp>
#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

class cluster_kinds : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { cluster().restore(); }
  relock::config settings() const { return cluster_settings(GetParam()); }
};

std::string unique_name(const std::string& base) {
  return base + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

TEST_P(cluster_kinds, fair_waiters_on_every_master_get_the_lock_in_queue_order) {
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, unique_name("fair"));
    auto raw = cluster().client(master);
    const std::string queue = "redisson_lock_queue:{" + name + "}";
    auto lock = client.fair_lock(name);
    lock.lock();
    std::vector<relock::owner> who;
    std::vector<std::future<void>> waiters;
    for (int i = 0; i < 3; ++i) {
      who.push_back(relock::owner::unique());
      waiters.push_back(lock.async_lock(who.back(), {}, asio::use_future));
      ASSERT_TRUE(wait_until([&] { return raw.command({"LLEN", queue}).integer == i + 1; }, 5s));
      ASSERT_TRUE(wait_until(
          [&] {
            return subscribers("redisson_lock__channel:{" + name +
                               "}:" + lock.owner_field(who.back())) == 1;
          },
          5s));
    }
    lock.unlock();
    for (std::size_t i = 0; i < waiters.size(); ++i) {
      ASSERT_EQ(waiters[i].wait_for(5s), std::future_status::ready) << name << " waiter " << i;
      if (i + 1 < waiters.size()) {
        EXPECT_EQ(waiters[i + 1].wait_for(50ms), std::future_status::timeout) << "out of turn";
      }
      lock.async_unlock(who[i], asio::use_future).get();
    }
    EXPECT_EQ(raw.command({"EXISTS", queue}).integer, 0);
  }
}

TEST_P(cluster_kinds, fenced_tokens_and_spin_holds_live_in_the_names_slot) {
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, unique_name("fenced"));
    auto raw = cluster().client(master);
    auto fenced = client.fenced_lock(name);
    const auto first = fenced.lock_and_get_token();
    EXPECT_EQ(fenced.lock_and_get_token(), first + 1);
    EXPECT_EQ(fenced.token(), first + 1);
    EXPECT_EQ(raw.command({"GET", "redisson_lock_token:{" + name + "}"}).str,
              std::to_string(first + 1));
    fenced.unlock();
    fenced.unlock();

    auto spin = client.spin_lock(name);
    spin.lock();
    EXPECT_FALSE(std::async(std::launch::async, [&] { return spin.try_lock(200ms); }).get());
    spin.unlock();
    EXPECT_EQ(raw.command({"EXISTS", name}).integer, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(pubsub, cluster_kinds, ::testing::Values("sharded", "classic"),
                         [](const auto& info) { return info.param; });
