// SPDX-License-Identifier: Apache-2.0
// relock on a real Redis Cluster (the shared 3 + 3 fixture): slot routing over every master,
// mutual exclusion, waking by message whatever master a channel's slot is on, MOVED after a slot
// migration, and clear errors for URLs that point at the wrong kind of deployment.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <asio/post.hpp>
#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "cluster_env.hpp"
#include "support/child_process.hpp"
#include "support/free_port.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

class cluster_lock : public ::testing::Test {
 protected:
  void SetUp() override { cluster().restore(); }
  static relock::config settings() {
    relock::config c;
    c.url = cluster().seed_url();
    return c;
  }
};

relock::error error_from(const relock::config& c) {
  try {
    relock::client client(c);
  } catch (const relock::error& e) {
    return e;
  }
  ADD_FAILURE() << "the client came up";
  return relock::error(errc::invalid_argument, "");
}

}  // namespace

TEST_F(cluster_lock, locks_on_a_thousand_names_land_on_every_master_and_route_by_slot) {
  relock::client client(settings());
  std::vector<relock::mutex> locks;
  for (int i = 0; i < 1000; ++i) locks.push_back(client.lock("spread:" + std::to_string(i)));
  for (auto& l : locks) l.lock(30s);
  std::map<std::uint16_t, int> per_master;
  for (const auto& master : cluster().masters()) {
    auto keys = cluster().client(master).command({"KEYS", "spread:*"});
    per_master[master.port] = static_cast<int>(keys.elements.size());
  }
  int total = 0;
  for (auto [port, n] : per_master) {
    EXPECT_GT(n, 200) << "master " << port;
    total += n;
  }
  EXPECT_EQ(total, 1000);
  for (auto& l : locks) l.unlock();
  for (const auto& master : cluster().masters()) {
    EXPECT_TRUE(cluster().client(master).command({"KEYS", "spread:*"}).elements.empty());
  }
}

TEST_F(cluster_lock, two_clients_exclude_each_other_over_two_hundred_names) {
  relock::client a(settings()), b(settings());
  constexpr int names = 200, rounds = 3;
  std::vector<int> counters(names, 0);  // guarded by the distributed locks alone
  auto work = [&](relock::client& c) {
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < names; ++i) {
        auto l = c.lock("count:" + std::to_string(i));
        std::lock_guard guard(l);
        const int seen = counters[i];
        std::this_thread::yield();
        counters[i] = seen + 1;
      }
    }
  };
  std::vector<std::thread> threads;
  for (auto* c : {&a, &a, &b, &b}) threads.emplace_back(work, std::ref(*c));
  for (auto& t : threads) t.join();
  for (int i = 0; i < names; ++i) EXPECT_EQ(counters[i], 4 * rounds) << "name " << i;
}

TEST_F(cluster_lock, a_waiter_wakes_on_the_unlock_message_in_each_mode_and_on_each_master) {
  for (const std::string mode : {"classic", "sharded"}) {
    relock::client holder(cluster_settings(mode)), waiter(cluster_settings(mode));
    for (const auto& master : cluster().masters()) {
      const std::string name = name_on(master, "wake-" + mode + ":");
      auto held = holder.lock(name);
      held.lock();  // the watchdog's 30 s lease: waking by TTL would take that long
      std::atomic<bool> got{false};
      std::thread t([&] {
        auto l = waiter.lock(name);
        l.lock();
        got = true;
        l.unlock();
      });
      ASSERT_TRUE(wait_until(
          [&] { return subscribers("redisson_lock__channel:{" + name + "}") >= 1; }, 5s));
      const auto released = steady::now();
      held.unlock();
      ASSERT_TRUE(wait_until([&] { return got.load(); }, 5s)) << "on master " << master.port;
      const auto took = steady::now() - released;
      std::printf("%s, master %u: the waiter in %lld us\n", mode.c_str(), master.port,
                  static_cast<long long>(
                      std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
      EXPECT_LT(took, 2s) << "woke on the message, not on the lease";
      t.join();
    }
  }
}

TEST_F(cluster_lock, a_hold_survives_its_slot_moving_and_the_client_follows_moved) {
  relock::client client(settings());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "moving:");
  auto l = client.lock(name);
  l.lock();
  const auto slot = cluster().slot_of(name);
  cluster().migrate_slot(slot, masters[0], masters[1]);
  // The client still routes the slot to the old owner: every call meets MOVED and follows it.
  EXPECT_TRUE(l.is_held_by_current_thread());
  l.lock();  // re-entry: a script, through MOVED
  EXPECT_EQ(l.hold_count(), 2);
  l.unlock();
  l.unlock();
  EXPECT_FALSE(l.is_locked());
  EXPECT_EQ(relock::detail::core_of(client)->executor().cluster(), true);
  std::promise<std::string> node;
  auto& core = *relock::detail::core_of(client);
  asio::post(core.io(), [&] { node.set_value(core.executor().node_of(name)); });
  EXPECT_EQ(node.get_future().get(), masters[1].address());
}

TEST_F(cluster_lock, the_watchdog_renews_holds_spread_over_every_master) {
  auto c = settings();
  c.watchdog_lease = 1s;
  relock::client client(c);
  std::vector<relock::mutex> locks;
  for (const auto& master : cluster().masters()) {
    for (int i = 0; i < 3; ++i)
      locks.push_back(client.lock(name_on(master, "kept" + std::to_string(i) + ":")));
  }
  for (auto& l : locks) l.lock();
  const auto until = steady::now() + 3s;  // three leases
  while (steady::now() < until) {
    for (auto& l : locks) ASSERT_TRUE(l.is_locked());
    std::this_thread::sleep_for(200ms);  // sampling, not waiting for an outcome
  }
  for (auto& l : locks) l.unlock();
}

TEST_F(cluster_lock, a_redis_url_to_a_cluster_node_is_refused_and_says_what_to_use) {
  relock::config c;
  c.url = "redis://" + cluster().masters()[0].address();
  auto e = error_from(c);
  EXPECT_EQ(e.code(), errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("redis-cluster://"), std::string::npos) << e.what();
}

TEST_F(cluster_lock, a_cluster_url_to_a_plain_server_or_to_nothing_is_a_clear_error) {
  redis_server plain;
  relock::config c;
  c.url = "redis-cluster://127.0.0.1:" + std::to_string(plain.port());
  auto e = error_from(c);
  EXPECT_EQ(e.code(), errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("not in cluster mode"), std::string::npos) << e.what();

  const closed_port first, second;
  c.url = "redis-cluster://127.0.0.1:" + std::to_string(first.port()) +
          ",127.0.0.1:" + std::to_string(second.port());
  c.connect_timeout = 1s;
  e = error_from(c);
  EXPECT_EQ(e.code(), errc::connection);
  EXPECT_NE(std::string(e.what()).find("no cluster node answered"), std::string::npos) << e.what();
}

TEST_F(cluster_lock, a_name_whose_derived_keys_leave_its_slot_is_refused_and_nothing_written) {
  // "a{b" hashes whole, and so do its channel and latch names, each to its own slot: its
  // release would fail with CROSSSLOT after the acquire had taken it.
  relock::client client(settings());
  auto e = error_of([&] { client.lock("half{open"); });
  EXPECT_EQ(e, errc::invalid_argument);
  // The same through a name mapper that breaks the rule for every name.
  auto c = settings();
  c.name_mapper = [](std::string_view name) { return "app{" + std::string(name); };
  relock::client mapped(c);
  EXPECT_EQ(error_of([&] { mapped.lock("x").lock(); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { mapped.read_write_lock("x").write_lock().lock(); }),
            errc::invalid_argument);
  // Nothing of theirs anywhere: no lock, latch or timeout key (other tests' keys may be there).
  for (const auto& master : cluster().masters()) {
    auto raw = cluster().client(master);
    EXPECT_TRUE(raw.command({"KEYS", "*half{open*"}).elements.empty());
    EXPECT_TRUE(raw.command({"KEYS", "*app{x*"}).elements.empty());
  }
  // A whole tag is fine.
  auto fine = client.lock("{half}open");
  fine.lock();
  fine.unlock();
}

TEST_F(cluster_lock, two_processes_exclude_each_other_over_two_hundred_names) {
  // Each process takes every lock in turn and adds one to its counter, read and written as two
  // commands under the lock: a second holder would lose an update.
  constexpr int names = 200, rounds = 2;
  auto counter = [](int i) { return "{proc-count:" + std::to_string(i) + "}:n"; };
  for (const auto& master : cluster().masters()) {
    auto raw = cluster().client(master);
    for (int i = 0; i < names; ++i) {
      if (cluster().owner_of(counter(i)).port == master.port) raw.command({"DEL", counter(i)});
    }
  }
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    children.push_back(fork_child([&] {
      relock::client c(settings());
      for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < names; ++i) {
          auto l = c.lock("proc-count:" + std::to_string(i));
          std::lock_guard guard(l);
          auto raw = cluster().client(cluster().owner_of(counter(i)));
          auto seen = raw.command({"GET", counter(i)});
          const long long n = seen.is_nil() ? 0 : std::stoll(seen.str);
          raw.command({"SET", counter(i), std::to_string(n + 1)});
        }
      }
      return 0;
    }));
    ASSERT_GT(children.back(), 0);
  }
  expect_children_succeed(children);
  for (int i = 0; i < names; ++i) {
    auto v = cluster().client(cluster().owner_of(counter(i))).command({"GET", counter(i)});
    EXPECT_EQ(v.str, std::to_string(2 * rounds)) << counter(i);
    cluster().client(cluster().owner_of(counter(i))).command({"DEL", counter(i)});  // shared
  }
}

// Every master has a replica: each lock write waits for it (data-layout §1.9), per key's master.
TEST_F(cluster_lock, lock_writes_wait_for_the_replica_of_their_master) {
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, "synced");
    auto lock = client.lock(name);
    lock.lock();
    const auto info = client.inspect(name);
    EXPECT_EQ(info.synced_replicas, 1) << name;
    EXPECT_EQ(info.last_acknowledged, 1) << name;
    EXPECT_EQ(info.online_replicas, 1) << name;
    lock.unlock();
    // The replica had the release before unlock returned.
    for (const auto& replica : cluster().replicas_of(master)) {
      auto raw = cluster().client(replica);
      raw.command({"READONLY"});
      EXPECT_EQ(raw.command({"EXISTS", name}).integer, 0) << name;
    }
  }
}
