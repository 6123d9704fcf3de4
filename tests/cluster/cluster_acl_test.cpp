// SPDX-License-Identifier: Apache-2.0
// Least privilege in a Cluster: every kind on every master under an ACL user with exactly the
// README's one-server block and its Cluster block (both read from README.md, so they cannot
// drift), and what a user without the Cluster block gets. A cluster does not propagate ACL
// users: the user is made on every node, and removed again, so the shared cluster is left as
// found.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <iostream>
#include <map>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "cluster_env.hpp"
#include "support/every_kind.hpp"
#include "support/readme_blocks.hpp"
#include "support/server_state.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

const std::string one_server_block = readme_acl_rules(0);
const std::string cluster_block = readme_acl_rules(1);

// The user `app` (password app-pw) with exactly `rules` on every node, masters and replicas: a
// replica is a master after a failover, and the seeds name replicas too.
class acl_user {
 public:
  explicit acl_user(const std::string& rules) {
    for (const auto& node : cluster().nodes()) {
      auto raw = cluster().client(node);
      relock::test::set_acl_user(raw, "app", "app-pw", rules);
    }
  }
  ~acl_user() {
    for (const auto& node : cluster().nodes()) {
      if (!cluster().running(node)) continue;  // killed: it comes back without the user
      try {
        cluster().client(node).command({"ACL", "DELUSER", "app"});
      } catch (const std::exception& e) {
        std::cerr << "ACL DELUSER on " << node.address() << ": " << e.what() << "\n";
      }
    }
  }
  acl_user(const acl_user&) = delete;
  acl_user& operator=(const acl_user&) = delete;
};

relock::config as_app(const std::string& pubsub = "") {
  relock::config c = cluster_settings(pubsub);
  c.url.insert(c.url.find("://") + 3, "app:app-pw@");
  c.watchdog_lease = 3s;
  c.log = [](relock::log_level level, std::string_view text) {
    if (level >= relock::log_level::warning) std::cerr << "relock: " << text << "\n";
  };
  return c;
}

// Stops the takes of `source` when it goes out of scope: a take still waiting after a failed
// assertion ends, instead of holding up its future's destructor for ever.
struct stop_at_exit {
  std::stop_source& source;
  ~stop_at_exit() { source.request_stop(); }
};

std::string stamp() {
  return std::to_string(steady::now().time_since_epoch().count() % 1'000'000'000);
}

// Subscribers of a sharded channel on `master` alone.
long long sharded_subscribers(const cluster_node& master, const std::string& channel) {
  return cluster()
      .client(master)
      .command({"PUBSUB", "SHARDNUMSUB", channel})
      .elements.at(1)
      .integer;
}

long long blocked_clients(const cluster_node& master) {
  auto raw = cluster().client(master);
  return relock::test::blocked_clients(raw);
}

std::map<std::uint16_t, std::string> digests() {
  std::map<std::uint16_t, std::string> by_port;
  for (const auto& master : cluster().masters()) {
    by_port[master.port] = cluster().client(master).command({"DEBUG", "DIGEST"}).str;
  }
  return by_port;
}

class cluster_acl : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster().restore();
    ASSERT_NE(one_server_block.find("+evalsha"), std::string::npos)
        << "README one-server block not found: " << one_server_block;
    ASSERT_NE(cluster_block.find("+cluster|shards"), std::string::npos)
        << "README Cluster block not found: " << cluster_block;
  }
  // A test that kills a master leaves it to the next test's restore() otherwise.
  void TearDown() override { cluster().restore(); }
};

}  // namespace

TEST_F(cluster_acl, the_readmes_blocks_are_enough_for_every_kind_on_every_master) {
  acl_user app(one_server_block + " " + cluster_block);
  // Auto pub/sub: sharded, as without ACL rules (discovery asks PUBSUB SHARDNUMSUB to tell).
  relock::client client(as_app()), other(as_app());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    const std::string run = stamp();
    auto on_master = [&](const std::string& kind) {
      return name_on(master, "app:" + kind + "-" + run + "-");
    };

    const std::string lock_name = on_master("lock");
    auto lock = client.lock(lock_name);
    lock.lock();
    auto waited = std::async(std::launch::async, [&] {
      auto l = other.lock(lock_name);
      const bool got = l.try_lock(10s);
      if (got) l.unlock();
      return got;
    });
    ASSERT_TRUE(wait_until(
        [&] {
          return sharded_subscribers(master, "redisson_lock__channel:{" + lock_name + "}") == 1;
        },
        5s))
        << "the waiter did not subscribe sharded on the name's master";
    lock.unlock();
    EXPECT_TRUE(waited.get()) << "the waiter was not woken";

    relock::test::take_and_give_back_each_kind(client, other, on_master);

    const std::string latch_name = on_master("latch");
    auto latch = client.count_down_latch(latch_name);
    EXPECT_TRUE(latch.try_set_count(1));
    auto opened = std::async(std::launch::async,
                             [&] { return other.count_down_latch(latch_name).await(10s); });
    ASSERT_TRUE(wait_until(
        [&] {
          return sharded_subscribers(master,
                                     "redisson_countdownlatch__channel__{" + latch_name + "}") == 1;
        },
        5s));
    latch.count_down();
    EXPECT_TRUE(opened.get()) << "the latch's waiter was not woken";

    const std::string queue_name = on_master("queue");
    auto queue = other.blocking_queue(queue_name);
    std::stop_source end_takes;
    auto taken = std::async(std::launch::async, [&] { return queue.take(end_takes.get_token()); });
    const stop_at_exit taken_ends{end_takes};
    ASSERT_TRUE(wait_until([&] { return blocked_clients(master) == 1; }, 5s));
    EXPECT_TRUE(client.blocking_queue(queue_name).offer("now"));
    ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(taken.get(), "now");

    // A take stopped while its BLPOP waits on the server ends that BLPOP at once (CLIENT ID,
    // CLIENT UNBLOCK), not at the end of its 5 s chunk.
    std::stop_source stop;
    auto stopped = std::async(std::launch::async, [&] {
      return relock::test::error_of([&] { queue.take(stop.get_token()); });
    });
    const stop_at_exit stopped_ends{stop};
    ASSERT_TRUE(wait_until([&] { return blocked_clients(master) == 1; }, 5s));
    stop.request_stop();
    EXPECT_EQ(stopped.get(), relock::errc::cancelled);
    EXPECT_TRUE(wait_until([&] { return blocked_clients(master) == 0; }, 1s))
        << "the stopped take's BLPOP still waits on the server";

    auto delayed = client.delayed_queue(queue_name);  // its transfer lives as long as it does
    delayed.offer("later", 50ms);
    EXPECT_EQ(queue.poll(5s), std::optional<std::string>("later"));
  }
}

// ASK: while a slot migrates, the source sends each request for a key it no longer has to the
// target, which serves it only after ASKING.
TEST_F(cluster_acl, renewals_and_lookups_follow_ask_into_a_migrating_slot) {
  acl_user app(one_server_block + " " + cluster_block);
  relock::client holder(as_app()), other(as_app());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "app:migrating-" + stamp() + "-");
  auto held = holder.lock(name);
  held.lock();  // the watchdog renews it every second (a 3 s lease)
  auto m = cluster().begin_migration(cluster().slot_of(name), masters[0], masters[1]);
  ASSERT_EQ(cluster().move_keys(m), 1u);
  auto target = cluster().client(masters[1]);
  auto lease_on_target = [&] {
    target.command({"ASKING"});
    return target.command({"PTTL", name}).integer;
  };
  // A renewal puts the lease back up to 3 s; between two, it runs down by a second.
  long long lowest = lease_on_target();
  EXPECT_TRUE(wait_until(
      [&] {
        const long long now = lease_on_target();
        lowest = std::min(lowest, now);
        return now > lowest + 200;
      },
      3s))
      << "no renewal reached the target";
  EXPECT_TRUE(other.lock(name).is_locked()) << "another client's look did not find the hold";
  cluster().finish_migration(m);
  held.unlock();
}

// A killed master's slots move to its replica: the client learns that from the slot map it asks
// for again (CLUSTER SHARDS), since no node it can reach redirects it there.
TEST_F(cluster_acl, a_failover_is_followed_under_the_rules) {
  acl_user app(one_server_block + " " + cluster_block);
  relock::client client(as_app());
  const auto victim = cluster().masters().at(0);
  const auto replica = cluster().replicas_of(victim).at(0);
  const std::string name = name_on(victim, "app:failover-" + stamp() + "-");
  auto lock = client.lock(name);
  ASSERT_TRUE(lock.try_lock());
  lock.unlock();
  const auto killed = steady::now();
  cluster().kill(victim);
  ASSERT_TRUE(cluster().wait_until_promoted(replica, 15s));
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return lock.try_lock(200ms, 10s);
        } catch (const relock::error&) {
          return false;  // the cluster is still settling (CLUSTERDOWN, a dead connection)
        }
      },
      20s))
      << "the client did not find the promoted replica";
  std::cout << "locked on the promoted replica "
            << std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - killed).count()
            << " ms after the kill\n";
  lock.unlock();
}

// What a client's start (or its first lock) threw.
std::pair<std::error_code, std::string> refusal() {
  try {
    relock::client client(as_app());
    auto lock = client.lock("app:never-" + stamp());
    if (lock.try_lock()) lock.unlock();
  } catch (const relock::error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

TEST_F(cluster_acl, without_the_cluster_block_the_client_is_refused_and_writes_nothing) {
  acl_user app(one_server_block);
  const auto before = digests();
  const auto [refused, said] = refusal();
  std::cout << "refused with " << refused.message() << ": " << said << "\n";
  EXPECT_TRUE(refused) << "the client started";
  EXPECT_NE(said.find("NOPERM"), std::string::npos) << said;
  EXPECT_NE(said.find("'cluster|slots'"), std::string::npos)
      << "what is refused is named: " << said;
  EXPECT_EQ(digests(), before);
}

// Discovery classifies the refusal: errc::no_permission, which the CLI turns into its pointer
// to the README's rules.
TEST_F(cluster_acl, without_the_cluster_block_the_error_is_no_permission) {
  acl_user app(one_server_block);
  const auto [refused, said] = refusal();
  EXPECT_EQ(refused, relock::errc::no_permission) << said;
}
