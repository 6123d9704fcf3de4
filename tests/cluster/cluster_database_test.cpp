// SPDX-License-Identifier: Apache-2.0
// A numbered database in a cluster URL (redis-cluster://.../1): every connection relock opens
// selects it, on every node it reaches and after every reconnect. Where the nodes have databases
// in cluster mode (Valkey 9 with cluster-databases above 1; the Valkey fixture's nodes have 16,
// support/cluster_nodes.cpp) keys land in that database on the slot's master, on every master,
// on a master first met after a failover, and after relock's connections were killed; database 0
// gets nothing. Where they have none (Redis Cluster; Valkey with cluster-databases 1) the client
// is refused at its start, in the server's words, and nothing is half-made. Which applies is
// asked of the cluster (CONFIG GET cluster-databases), never read from a version; the tests that
// do not apply skip.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// The name of this file's relock clients, to tell their connections in CLIENT LIST.
const std::string client_tag = "relock-db-test:";

// Databases the nodes have in cluster mode: CONFIG GET cluster-databases on a master; 1 where
// the server has no such setting (Redis answers with an empty list).
long long cluster_databases() {
  auto r =
      cluster().client(cluster().masters().at(0)).command({"CONFIG", "GET", "cluster-databases"});
  return r.elements.size() == 2 ? std::stoll(r.elements[1].str) : 1;
}

relock::config in_database_1() {
  relock::config c = cluster_settings();
  c.url += "/1";
  c.client_name = client_tag + "{id}";
  return c;
}

// A new connection to `node` in database `db`.
raw_client client_in(const cluster_node& node, int db) {
  auto raw = cluster().client(node);
  auto selected = raw.command({"SELECT", std::to_string(db)});
  if (selected.is_error()) {
    throw std::runtime_error(node.address() + ": SELECT " + std::to_string(db) + ": " +
                             selected.str);
  }
  return raw;
}

std::set<std::string> keys_in(const cluster_node& node, int db) {
  std::set<std::string> keys;
  for (const auto& k : client_in(node, db).command({"KEYS", "*"}).elements) keys.insert(k.str);
  return keys;
}

// One connection of this file's clients, as CLIENT LIST shows it.
struct listed_connection {
  std::string id;
  std::string db;
  std::string cmd;
};

std::vector<listed_connection> relock_connections(const cluster_node& node) {
  std::vector<listed_connection> out;
  std::istringstream list(cluster().client(node).command({"CLIENT", "LIST"}).str);
  for (std::string line; std::getline(list, line);) {
    std::map<std::string, std::string> field;
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) field[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (field["name"].starts_with(client_tag)) {
      out.push_back({field["id"], field["db"], field["cmd"]});
    }
  }
  return out;
}

// Every connection relock has on `node` selected database 1, and there is one at least.
void expect_every_connection_in_database_1(const cluster_node& node) {
  const auto connections = relock_connections(node);
  EXPECT_FALSE(connections.empty()) << "no relock connection on " << node.address();
  for (const auto& c : connections) {
    EXPECT_EQ(c.db, "1") << "connection " << c.id << " on " << node.address();
  }
}

class cluster_database : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster().restore();
    databases_ = cluster_databases();
    if (databases_ > 1) clear_database_1();
  }
  void TearDown() override {
    if (databases_ < 2) return;
    cluster().restore();  // after a failover
    // A key left in database 1 would stop a later test's slot migration, which moves only
    // database 0's keys (and a node refuses to give up a slot it still holds keys of).
    clear_database_1();
  }

  static void clear_database_1() {
    for (const auto& master : cluster().masters()) client_in(master, 1).command({"FLUSHDB"});
  }

  long long databases_ = 1;
};

const char* const no_databases =
    "the nodes have no databases in cluster mode (CONFIG GET cluster-databases: none, or 1): a "
    "cluster URL's /1 is refused there";

}  // namespace

TEST_F(cluster_database, a_database_the_cluster_has_not_is_refused_at_start_in_its_words) {
  if (databases_ > 1) {
    GTEST_SKIP() << "the nodes have " << databases_
                 << " databases in cluster mode (cluster-databases): /1 is theirs to select";
  }
  relock::config c = cluster_settings();
  c.url += "/1";
  try {
    relock::client refused(c);
    FAIL() << "a cluster without databases accepted SELECT 1";
  } catch (const relock::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SELECT 1"), std::string::npos) << what;
  }
}

// A lock on every master at once: each in database 1 of its slot's master, none in database 0,
// every relock connection there in database 1; and gone from database 1 once released.
TEST_F(cluster_database, locks_land_in_the_urls_database_on_every_master_and_db_0_gets_nothing) {
  if (databases_ < 2) GTEST_SKIP() << no_databases;
  const auto masters = cluster().masters();
  std::vector<std::set<std::string>> db0_before;
  for (const auto& master : masters) db0_before.push_back(keys_in(master, 0));

  relock::client client(in_database_1());
  std::vector<std::string> names;
  std::vector<relock::mutex> holds;
  for (const auto& master : masters) {
    names.push_back(name_on(master, "db1:"));
    holds.push_back(client.lock(names.back()));
    holds.back().lock();
  }
  const auto me = holds.front().owner_field(relock::owner::current_thread());
  for (std::size_t i = 0; i < masters.size(); ++i) {
    SCOPED_TRACE("master " + masters[i].address() + ", lock " + names[i]);
    auto db1 = client_in(masters[i], 1);
    EXPECT_EQ(db1.command({"HGET", names[i], me}).str, "1");
    EXPECT_GT(db1.command({"PTTL", names[i]}).integer, 0);
    // Database 0 gained nothing (keys of earlier tests may only have expired meanwhile).
    const auto db0 = keys_in(masters[i], 0);
    EXPECT_EQ(db0.count(names[i]), 0u);
    for (const auto& key : db0) EXPECT_EQ(db0_before[i].count(key), 1u) << key << " in db 0";
    expect_every_connection_in_database_1(masters[i]);
  }
  for (auto& h : holds) h.unlock();
  for (std::size_t i = 0; i < masters.size(); ++i) {
    EXPECT_EQ(client_in(masters[i], 1).command({"EXISTS", names[i]}).integer, 0) << names[i];
  }
}

// A take waits on the server (BLPOP) on a connection of its own, made on demand: in database 1
// too, so it gets what is pushed there and not what is pushed to database 0; an offer goes to
// database 1.
TEST_F(cluster_database, a_take_waits_in_the_urls_database_and_offers_go_there) {
  if (databases_ < 2) GTEST_SKIP() << no_databases;
  const auto master = cluster().masters().at(0);
  const std::string name = name_on(master, "db1-queue:");
  relock::client client(in_database_1());
  auto q = client.blocking_queue(name);
  auto taken = std::async(std::launch::async, [&q] { return q.take(); });
  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto& c : relock_connections(master)) {
          if (c.cmd == "blpop") return true;
        }
        return false;
      },
      5s))
      << "the take never waited on the server";
  expect_every_connection_in_database_1(master);

  auto db0 = client_in(master, 0);
  auto db1 = client_in(master, 1);
  db0.command({"RPUSH", name, "in-db-0"});
  db1.command({"RPUSH", name, "in-db-1"});
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(taken.get(), "in-db-1");

  EXPECT_TRUE(q.offer("offered"));
  const auto in_db1 = db1.command({"LRANGE", name, "0", "-1"});
  ASSERT_EQ(in_db1.elements.size(), 1u);
  EXPECT_EQ(in_db1.elements[0].str, "offered");
  EXPECT_EQ(db0.command({"LLEN", name}).integer, 1);
  db0.command({"DEL", name});
}

// relock's connections to a master killed (CLIENT KILL ID, each): they come back as new
// connections in database 1, and the next lock lands there.
TEST_F(cluster_database, after_a_reconnect_the_next_lock_still_lands_in_the_urls_database) {
  if (databases_ < 2) GTEST_SKIP() << no_databases;
  const auto master = cluster().masters().at(0);
  const std::string name = name_on(master, "db1-reconnect:");
  relock::client client(in_database_1());
  auto lk = client.lock(name);
  lk.lock();
  lk.unlock();

  const auto before = relock_connections(master);
  ASSERT_FALSE(before.empty());
  auto admin = cluster().client(master);
  for (const auto& c : before) admin.command({"CLIENT", "KILL", "ID", c.id});
  // As many again, none of them an old one: each was reconnected.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto now = relock_connections(master);
        if (now.size() < before.size()) return false;
        for (const auto& c : now) {
          for (const auto& old : before) {
            if (c.id == old.id) return false;
          }
        }
        return true;
      },
      10s))
      << "relock's connections to " << master.address() << " did not come back";
  expect_every_connection_in_database_1(master);

  lk.lock();
  EXPECT_EQ(client_in(master, 1)
                .command({"HGET", name, lk.owner_field(relock::owner::current_thread())})
                .str,
            "1");
  EXPECT_EQ(client_in(master, 0).command({"EXISTS", name}).integer, 0);
  lk.unlock();
}

// A replica promoted after its master was killed is a node the client first meets then (a pool
// made for the new master): it selects database 1 there too.
TEST_F(cluster_database, a_master_first_met_after_a_failover_is_used_in_the_urls_database) {
  if (databases_ < 2) GTEST_SKIP() << no_databases;
  const auto victim = cluster().masters().at(0);
  const auto replica = cluster().replicas_of(victim).at(0);
  const std::string name = name_on(victim, "db1-failover:");
  relock::client client(in_database_1());
  auto lk = client.lock(name);
  lk.lock();
  lk.unlock();
  EXPECT_TRUE(relock_connections(replica).empty()) << "relock connected to a replica";

  cluster().kill(victim);
  ASSERT_TRUE(cluster().wait_until_promoted(replica, 15s));
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return lk.try_lock(200ms, 10s);
        } catch (const relock::error&) {
          return false;  // the cluster is still settling (CLUSTERDOWN, a dead connection)
        }
      },
      20s));
  EXPECT_EQ(client_in(replica, 1)
                .command({"HGET", name, lk.owner_field(relock::owner::current_thread())})
                .str,
            "1");
  EXPECT_EQ(client_in(replica, 0).command({"EXISTS", name}).integer, 0);
  expect_every_connection_in_database_1(replica);
  lk.unlock();
}
