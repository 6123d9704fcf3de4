// SPDX-License-Identifier: Apache-2.0
// `relock top` on a Redis Cluster (the shared fixture, tests/support/redis_cluster.hpp): SCAN on
// every master finds the objects wherever their slots live, each row names the master that
// serves it, a fair lock's queue shows under its lock, and a waiter's sharded subscription
// (relock's default in a Cluster) counts on the lock's own master.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <map>
#include <relock/client.hpp>
#include <set>
#include <string>
#include <thread>

#include "cli_process.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;

namespace {

class cli_cluster_top : public ::testing::Test {
 protected:
  void SetUp() override { cluster().restore(); }
  static redis_cluster& cluster() { return shared_cluster(); }

  // The names of this test (the cluster outlives it: the PID keeps runs apart).
  static std::string prefix() { return "cli-top:" + std::to_string(::getpid()) + ":"; }
  // A name of this test whose slot `master` serves.
  static std::string name_on(const cluster_node& master, const std::string& what) {
    for (int i = 0;; ++i) {
      auto name = prefix() + what + ":" + std::to_string(i);
      if (cluster().owner_of(name).port == master.port) return name;
    }
  }
  // Sharded subscribers of `name`'s unlock channel, on the master of its slot.
  static long long sharded_listeners(const std::string& name) {
    const auto channel = "redisson_lock__channel:{" + name + "}";
    return cluster()
        .client(cluster().owner_of(channel))
        .command({"PUBSUB", "SHARDNUMSUB", channel})
        .elements.at(1)
        .integer;
  }
};

}  // namespace

TEST_F(cli_cluster_top, shows_the_locks_of_every_master_each_with_its_node) {
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 3u);
  relock::config settings;
  settings.url = cluster().seed_url();
  relock::client client(settings);

  std::map<std::string, std::string> node_of;  // name -> the master that must be shown
  std::vector<relock::mutex> held;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto name = name_on(masters[i % 3], "held" + std::to_string(i));
    node_of[name] = masters[i % 3].address();
    held.push_back(client.lock(name));
    held.back().lock();
  }
  // A fair lock with a waiter queued behind its holder, on the second master.
  const auto fair_name = name_on(masters[1], "fair");
  node_of[fair_name] = masters[1].address();
  auto fair = client.fair_lock(fair_name);
  fair.lock();
  std::jthread fair_waiter([&] {
    auto mine = client.fair_lock(fair_name);
    if (mine.try_lock(30s)) mine.unlock();
  });
  // A plain waiter on a lock of the first master: a sharded subscription there, counted with
  // the channel of the other lock there (another slot) in one PUBSUB SHARDNUMSUB.
  const auto waited = held[3].name();
  std::jthread waiter([&] {
    auto mine = client.lock(waited);
    if (mine.try_lock(30s)) mine.unlock();
  });
  const auto queue_key = "redisson_lock_queue:{" + fair_name + "}";
  ASSERT_TRUE(wait_until(
      [&] {
        return cluster()
                   .client(cluster().owner_of(queue_key))
                   .command({"LLEN", queue_key})
                   .integer == 1;
      },
      10s));
  ASSERT_TRUE(wait_until([&] { return sharded_listeners(waited) == 1; }, 10s));

  const auto r = run_cli({"--url", cluster().seed_url(), "--json", "top", prefix() + "*"}, 30s);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto top = json::parse(r.out);
  std::set<std::string> names;
  for (const auto& o : top["objects"]) {
    const auto name = o["name"].get<std::string>();
    names.insert(name);
    EXPECT_EQ(o["node"], node_of[name]) << o.dump();
    ASSERT_EQ(o["holders"].size(), 1u) << o.dump();
    EXPECT_EQ(o["holders"][0]["pid"], std::to_string(::getpid())) << o.dump();
    if (name == fair_name) {
      EXPECT_EQ(o["kind"], "fair");
      EXPECT_EQ(o["waiters"], 1) << o.dump();
    }
    if (name == waited) {
      EXPECT_EQ(o["subscribers"], 1) << o.dump();
    }
  }
  std::set<std::string> expected;
  for (const auto& [name, node] : node_of) expected.insert(name);
  EXPECT_EQ(names, expected) << top.dump();
  EXPECT_EQ(top["matched"], 5);

  fair.unlock();
  held[3].unlock();
  fair_waiter.join();
  waiter.join();
}
