// SPDX-License-Identifier: Apache-2.0
// The shared Redis Cluster fixture itself: every cluster test trusts it to be up with 3 masters
// and 3 replicas, to say where keys live as the servers do, to move a slot step by step, and to
// come back healthy from a failover.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "support/cluster_state.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

namespace cluster_fixture_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::resp::reply;
using relock::test::cluster_node;
using relock::test::node_role;
using relock::test::redis_cluster;
using relock::test::shared_cluster;
using relock::test::wait_until;

namespace {

class cluster_fixture : public ::testing::Test {
 protected:
  // Whatever an earlier test left (a node down, a migration open) is repaired first.
  void SetUp() override { cluster.restore(); }

  // A master other than `node`.
  cluster_node other_master(const cluster_node& node) {
    for (const auto& m : cluster.masters()) {
      if (m.port != node.port) return m;
    }
    throw std::runtime_error("no other master");
  }

  redis_cluster& cluster = shared_cluster();
};

long long ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

reply redirect(const char* kind, std::uint16_t slot, const cluster_node& to) {
  return reply::make_error(std::string(kind) + " " + std::to_string(slot) + " " + to.address());
}

}  // namespace

TEST_F(cluster_fixture, three_masters_each_with_a_replica_share_the_slots) {
  auto masters = cluster.masters();
  auto replicas = cluster.replicas();
  ASSERT_EQ(masters.size(), 3u);
  ASSERT_EQ(replicas.size(), 3u);
  std::size_t total = 0;
  for (const auto& m : masters) {
    // 5461 or 5462 as created; restore() may have moved a slot or two since, finishing a
    // migration that a failed test left open.
    auto slots = cluster.slot_count(m);
    EXPECT_NEAR(static_cast<double>(slots), 16384 / 3.0, 8) << m.address();
    total += slots;
    EXPECT_EQ(cluster.replicas_of(m).size(), 1u) << m.address();
  }
  EXPECT_EQ(total, 16384u);
  for (const auto& r : replicas) {
    auto master = cluster.master_of(r);
    ASSERT_TRUE(master) << r.address();
    EXPECT_EQ(cluster.role(*master), node_role::master);
  }
  std::string url = "redis-cluster://";
  for (const auto& n : cluster.nodes()) {
    EXPECT_EQ(n.host, "127.0.0.1");
    EXPECT_LT(n.port + 10000, 65536) << "cluster bus port";
    EXPECT_TRUE(relock::test::process_alive(n.pid)) << n.address() << " pid " << n.pid;
    EXPECT_TRUE(std::filesystem::exists(n.dir / "nodes.conf")) << n.dir;
    url += (url.ends_with("//") ? "" : ",") + n.address();
  }
  EXPECT_EQ(cluster.seed_url(), url);
}

TEST_F(cluster_fixture, a_key_is_served_by_its_owner_and_redirected_by_the_others) {
  const std::string key = "fixture:{moved}";
  const auto slot = cluster.slot_of(key);
  const auto owner = cluster.owner_of(key);
  auto raw = cluster.client(owner);
  ASSERT_EQ(raw.command({"SET", key, "v"}), reply::make_status("OK"));
  EXPECT_EQ(raw.command({"GET", key}), reply::make_string("v"));
  for (const auto& n : cluster.nodes()) {
    if (n.port == owner.port) continue;
    // The owner's replica too: without READONLY, a replica redirects to its master.
    EXPECT_EQ(cluster.client(n).command({"GET", key}), redirect("MOVED", slot, owner))
        << n.address();
  }
  raw.command({"DEL", key});
}

TEST_F(cluster_fixture, a_migrated_slot_takes_its_keys_along_step_by_step) {
  const std::string key = "fixture:{migrate}";
  const std::string absent = "fixture:{migrate}:absent";
  const auto slot = cluster.slot_of(key);
  const auto from = cluster.owner_of(key);
  const auto to = other_master(from);
  auto source = cluster.client(from);
  auto target = cluster.client(to);
  ASSERT_EQ(source.command({"SET", key, "v"}), reply::make_status("OK"));

  auto started = std::chrono::steady_clock::now();
  auto m = cluster.begin_migration(slot, from, to);
  // Mid-migration: the source serves the keys it still has and sends the others to the target,
  // which serves the slot only after ASKING.
  EXPECT_EQ(source.command({"GET", key}), reply::make_string("v"));
  EXPECT_EQ(source.command({"GET", absent}), redirect("ASK", slot, to));
  EXPECT_EQ(cluster.move_keys(m), 1u);
  EXPECT_EQ(source.command({"GET", key}), redirect("ASK", slot, to));
  EXPECT_EQ(target.command({"GET", key}), redirect("MOVED", slot, from));
  EXPECT_EQ(target.command({"ASKING"}), reply::make_status("OK"));
  EXPECT_EQ(target.command({"GET", key}), reply::make_string("v"));

  cluster.finish_migration(m);
  std::cout << "[ cluster  ] slot " << slot << " moved " << from.address() << " -> " << to.address()
            << " in " << ms(std::chrono::steady_clock::now() - started)
            << " ms (every node agreeing)\n";
  EXPECT_EQ(cluster.owner_of(key).port, to.port);
  EXPECT_EQ(target.command({"GET", key}), reply::make_string("v"));
  EXPECT_EQ(source.command({"GET", key}), redirect("MOVED", slot, to));

  cluster.migrate_slot(slot, to, from);
  EXPECT_EQ(cluster.owner_of(key).port, from.port);
  EXPECT_EQ(source.command({"GET", key}), reply::make_string("v"));
  source.command({"DEL", key});
  cluster.wait_healthy();
}

TEST_F(cluster_fixture, restore_finishes_a_migration_left_open) {
  const std::string key = "fixture:{open}";
  const auto slot = cluster.slot_of(key);
  const auto from = cluster.owner_of(key);
  const auto to = other_master(from);
  ASSERT_EQ(cluster.client(from).command({"SET", key, "v"}), reply::make_status("OK"));
  cluster.begin_migration(slot, from, to);
  // As a test that failed midway would leave it.
  EXPECT_NE(cluster.health_problem().find("slot migration open"), std::string::npos)
      << cluster.health_problem();

  cluster.restore();
  EXPECT_EQ(cluster.owner_of(key).port, to.port);
  EXPECT_EQ(cluster.client(to).command({"GET", key}), reply::make_string("v"));
  cluster.migrate_slot(slot, to, from);
  cluster.client(from).command({"DEL", key});
}

TEST_F(cluster_fixture, a_killed_master_fails_over_and_rejoins_as_a_replica) {
  const std::string key = "fixture:{failover}";
  const auto master = cluster.owner_of(key);
  const auto replicas = cluster.replicas_of(master);
  ASSERT_EQ(replicas.size(), 1u);
  const auto replica = replicas.front();
  auto raw = cluster.client(master);
  ASSERT_EQ(raw.command({"SET", key, "v"}), reply::make_status("OK"));
  // Acknowledged by the replica, so the failover cannot lose it.
  ASSERT_EQ(raw.command({"WAIT", "1", "5000"}), reply::make_integer(1));

  const auto killed = std::chrono::steady_clock::now();
  cluster.kill(master);
  EXPECT_FALSE(cluster.running(master));
  EXPECT_FALSE(relock::test::process_alive(master.pid));
  EXPECT_EQ(cluster.role(master), node_role::down);
  ASSERT_TRUE(cluster.wait_until_promoted(replica, 30s)) << cluster.health_problem();
  const auto failover = std::chrono::steady_clock::now() - killed;
  EXPECT_EQ(cluster.client(replica).command({"GET", key}), reply::make_string("v"));

  const auto restarted = std::chrono::steady_clock::now();
  cluster.restart(master);
  EXPECT_TRUE(cluster.running(master));
  EXPECT_NE(cluster.node(master.port).pid, master.pid);
  auto rejoined = [&] {
    auto m = cluster.master_of(master);
    return m && m->port == replica.port;
  };
  EXPECT_TRUE(wait_until(rejoined, 30s));
  const auto rejoin = std::chrono::steady_clock::now() - restarted;
  cluster.wait_healthy();
  const auto healthy = std::chrono::steady_clock::now() - restarted;
  EXPECT_EQ(cluster.owner_of(key).port, replica.port);
  EXPECT_EQ(cluster.client(master).command({"GET", key}),
            redirect("MOVED", cluster.slot_of(key), replica));
  std::cout << "[ cluster  ] node timeout " << cluster.options().node_timeout.count()
            << " ms: master " << master.address() << " killed, replica " << replica.address()
            << " promoted after " << ms(failover) << " ms; restarted, a replica again after "
            << ms(rejoin) << " ms, cluster healthy after " << ms(healthy) << " ms\n";
  RecordProperty("failover_ms", static_cast<int>(ms(failover)));
  cluster.client(replica).command({"DEL", key});
}

}  // namespace cluster_fixture_test
