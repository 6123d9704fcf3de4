// SPDX-License-Identifier: Apache-2.0
// The fault suite on the shared Redis Cluster (3 masters + 3 replicas): worker processes take
// fenced and plain locks over names on every master, replica sync on, while the nemesis runs a
// graceful CLUSTER FAILOVER, a live slot migration under the holders, atomic migrations of every
// slot in use where the server has them (Valkey 9's CLUSTER MIGRATESLOTS, some held at the
// cutover so that writes wait in the source's pause and meet MOVED), and a master crash.
// Every grant the library returned was acknowledged by a replica, so none may be lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "support/fault_run.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// Holds an atomic migration at its cutover this long: writes to the source wait in its pause
// (every slot of the node's) and are answered MOVED after. Below the workers' command timeout
// (1 s), as a real cutover is: one longer would time their requests out, which says nothing.
constexpr auto cutover_held = 300ms;

// Two names on each master, so every fault touches some of them.
std::vector<std::string> names_over_masters(redis_cluster& cluster) {
  std::vector<std::string> names;
  for (const auto& master : cluster.masters()) {
    for (int i = 0, found = 0; found < 2; ++i) {
      std::string name = "fault-c" + std::to_string(master.port) + "-" + std::to_string(i);
      if (cluster.owner_of(name).port == master.port) {
        names.push_back(name);
        ++found;
      }
    }
  }
  return names;
}

}  // namespace

TEST(faults_cluster, workers_through_failover_migration_and_crash_leave_no_violation) {
  redis_cluster& cluster = shared_cluster();
  cluster.restore();
  fault_run run("cluster");
  const auto names = names_over_masters(cluster);
  worker_settings s;
  s.url = cluster.seed_url() + "?replica_sync=on";
  s.names = names;
  s.threads = 3;
  s.command_timeout_ms = 1000;
  s.until_ns = ns_from_now(120s);  // the schedule ends it: see the end
  // Half the workers reuse their threads' owners, as applications do (the single-server run
  // says why): a late release or take-back after a failover or a MOVED would show as an overlap.
  for (int i = 0; i < 4; ++i) {
    worker_settings one = s;
    if (i % 2 == 1) one.extra.push_back("reuse_owners=1");
    run.start_worker(one);
  }
  auto settle = [] { std::this_thread::sleep_for(3s); };
  settle();

  // A graceful failover: the replica of names[0]'s master takes over without losing a write.
  {
    const auto master = cluster.owner_of(names[0]);
    const auto replica = cluster.replicas_of(master).at(0);
    run.fault("start", "failover", "server");
    auto r = cluster.client(replica).command({"CLUSTER", "FAILOVER"});
    ASSERT_FALSE(r.is_error()) << r.str;
    ASSERT_TRUE(cluster.wait_until_promoted(replica, 30s));
    run.fault("end", "failover", "server");
    cluster.wait_healthy(30s);
  }
  settle();

  // A live migration of names[2]'s slot while it is held and waited on.
  {
    const auto from = cluster.owner_of(names[2]);
    cluster_node to{};
    for (const auto& m : cluster.masters()) {
      if (m.port != from.port) to = m;
    }
    run.fault("start", "migration", "server", {names[2]});
    auto m = cluster.begin_migration(cluster.slot_of(names[2]), from, to);
    std::this_thread::sleep_for(1s);  // holders renew through ASK, waiters wait
    cluster.finish_migration(m);
    run.fault("end", "migration", "server", {names[2]});
  }
  settle();

  // Atomic migrations of every name's slot to the next master, under the holders and waiters;
  // every other one held at the cutover, so releases, renewals and acquires sent then land
  // there. Nothing may break: the slot moves whole, and what met MOVED never ran.
  if (cluster.has_atomic_migration()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto slot = cluster.slot_of(names[i]);
      const auto from = cluster.owner_of_slot(slot);
      const auto masters = cluster.masters();
      const auto at = std::find_if(masters.begin(), masters.end(),
                                   [&](const auto& m) { return m.port == from.port; });
      const auto to =
          masters[(static_cast<std::size_t>(at - masters.begin()) + 1) % masters.size()];
      run.fault("start", "atomic_migration", "server", {names[i]});
      if (i % 2 == 0) {
        cluster.migrate_slot_atomically(slot, from, to);
      } else {
        auto m = cluster.begin_atomic_migration(slot, from, to, cutover_hold::cutover);
        std::this_thread::sleep_for(cutover_held);  // the nemesis's pacing: writes pile up
        cluster.finish_atomic_migration(m);
      }
      run.fault("end", "atomic_migration", "server", {names[i]});
      std::this_thread::sleep_for(500ms);  // work on the new owner before the next move
    }
    settle();
  } else {
    std::cout << "no atomic migrations: " << cluster.atomic_migration_missing() << std::endl;
  }

  // A crash: names[4]'s master dies, its replica is promoted, the old master comes back.
  {
    const auto master = cluster.owner_of(names[4]);
    const auto replica = cluster.replicas_of(master).at(0);
    run.fault("start", "failover", "server");
    cluster.kill(master);
    ASSERT_TRUE(cluster.wait_until_promoted(replica, 30s));
    run.fault("end", "failover", "server");
    cluster.restart(master);
    cluster.wait_healthy(60s);
  }
  settle();
  for (std::size_t i = 0; i < run.workers(); ++i) run.kill_worker(i);

  const verdict v = run.check(names, 5000);
  std::cout << v.output << std::endl;
  EXPECT_EQ(v.exit_code, 0) << "histories in " << run.dir();
  cluster.restore();
}
