// SPDX-License-Identifier: Apache-2.0
// relock over TLS to a Redis Cluster of its own (3 masters + 3 replicas, tls-cluster and
// tls-replication on, certificates from a throwaway CA that name localhost but not 127.0.0.1),
// whose nodes announce the hostname localhost as their preferred endpoint, as cloud services do:
// relock reaches every node at its TLS port by that name, so the certificates verify; locks,
// pub/sub wake-ups, blocking takes and MOVED all go over TLS.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "support/redis_cluster.hpp"
#include "support/tls_client.hpp"
#include "support/tls_cluster.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::cluster_node;
using relock::test::redis_cluster;
using relock::test::refusal;
using relock::test::tls_files;
using relock::test::url_path;
using relock::test::wait_until;

namespace {

class cluster_tls : public ::testing::Test {
 protected:
  // One cluster for the suite: starting six TLS nodes is most of its run time.
  static void SetUpTestSuite() {
    files_ = std::make_unique<tls_files>();
    cluster_ = std::make_unique<redis_cluster>(relock::test::tls_cluster_by_hostname(*files_));
  }
  static void TearDownTestSuite() {
    cluster_.reset();
    files_.reset();
  }

  static redis_cluster& cluster() { return *cluster_; }

  // The cluster by name at its TLS ports, verified against the test CA.
  static relock::config settings(const std::string& seed_host = "localhost") {
    relock::config c;
    c.url = cluster().tls_seed_url(seed_host) + "?tls_ca=" + url_path(files_->ca());
    c.connect_timeout = 3s;
    return c;
  }

  // A name (with `prefix`) whose slot `master` serves.
  static std::string name_on(const cluster_node& master, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string name = prefix + std::to_string(i);
      if (cluster().owner_of(name).port == master.port) return name;
    }
  }

  static inline std::unique_ptr<tls_files> files_;
  static inline std::unique_ptr<redis_cluster> cluster_;
};

// relock connections a node has on `port`: CLIENT LIST's laddr is the port they came in on.
int relock_clients_on(const redis_cluster& cluster, const cluster_node& node, std::uint16_t port) {
  const std::string list = cluster.client(node).command({"CLIENT", "LIST"}).str;
  int n = 0;
  for (std::size_t at = 0; (at = list.find("laddr=", at)) != std::string::npos; ++at) {
    const auto end = list.find('\n', at);
    const std::string line = list.substr(at, end - at);
    if (line.starts_with("laddr=127.0.0.1:" + std::to_string(port) + " ") &&
        line.find(" name=relock:") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

TEST_F(cluster_tls, the_nodes_announce_their_tls_port_and_hostname) {
  // What relock reads: CLUSTER SHARDS names both ports and the hostname whoever asks, and a
  // MOVED names the port of the connection's kind (checked over TLS by the tests below).
  const auto master = cluster().masters().front();
  const auto shards = cluster().client(master).command({"CLUSTER", "SHARDS"});
  ASSERT_TRUE(shards.is_array());
  ASSERT_FALSE(shards.elements.empty());
  const auto& node = shards.elements[0].elements.at(3).elements.at(0);
  std::string fields;
  for (std::size_t i = 0; i + 1 < node.elements.size(); i += 2) {
    fields += node.elements[i].str + "=" +
              (node.elements[i + 1].is_integer() ? std::to_string(node.elements[i + 1].integer)
                                                 : node.elements[i + 1].str) +
              " ";
  }
  EXPECT_NE(fields.find(" tls-port="), std::string::npos) << fields;
  EXPECT_NE(fields.find(" endpoint=localhost "), std::string::npos) << fields;
  EXPECT_NE(fields.find(" ip=127.0.0.1 "), std::string::npos) << fields;
}

TEST_F(cluster_tls, locks_on_every_master_by_the_announced_name_at_the_tls_ports) {
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, "tls-lock:");
    auto lock = client.lock(name);
    lock.lock();
    EXPECT_EQ(cluster().client(master).command({"EXISTS", name}).integer, 1);
    lock.unlock();
    EXPECT_EQ(cluster().client(master).command({"EXISTS", name}).integer, 0);
    EXPECT_GE(relock_clients_on(cluster(), master, master.tls_port), 1) << master.address();
    EXPECT_EQ(relock_clients_on(cluster(), master, master.port), 0) << "never the plain port";
  }
}

TEST_F(cluster_tls, a_seed_given_by_address_is_verified_by_that_address) {
  // The seed is a node like any other: the certificate must name what relock was told to
  // connect to, or the URL names the certificate's name (which then verifies every node).
  const auto [code, what] = refusal(settings("127.0.0.1"));
  EXPECT_EQ(code, errc::connection);
  EXPECT_NE(what.find("does not name '127.0.0.1'"), std::string::npos) << what;

  auto named = settings("127.0.0.1");
  named.url += "&tls_server_name=localhost";
  relock::client client(named);
  auto lock = client.lock("tls-by-address");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST_F(cluster_tls, nodes_that_announce_an_address_the_certificate_lacks_are_refused) {
  // Proof that relock goes by what the nodes announce: announcing their ip instead, the same
  // seed (by name) leads relock to 127.0.0.1, which the certificate does not name.
  auto prefer = [](const std::string& type) {
    for (const auto& n : cluster().nodes()) {
      cluster().client(n).command({"CONFIG", "SET", "cluster-preferred-endpoint-type", type});
    }
  };
  prefer("ip");
  const auto [code, what] = refusal(settings());
  prefer("hostname");
  EXPECT_EQ(code, errc::connection);
  EXPECT_NE(what.find("does not name '127.0.0.1'"), std::string::npos) << what;
}

TEST_F(cluster_tls, a_waiter_wakes_on_pubsub_and_a_take_blocks_over_tls) {
  relock::client holder(settings()), waiter(settings());
  const auto master = cluster().masters().back();
  const std::string name = name_on(master, "tls-wait:");
  auto held = holder.lock(name);
  held.lock();  // the watchdog's 30 s lease: waking by TTL would take that long
  auto waiting = std::async(std::launch::async, [&] {
    auto lock = waiter.lock(name);
    const auto asked = std::chrono::steady_clock::now();
    const bool got = lock.try_lock(10s);
    const auto took = std::chrono::steady_clock::now() - asked;
    if (got) lock.unlock();
    return std::make_pair(got, took);
  });
  const std::string channel = "redisson_lock__channel:{" + name + "}";
  ASSERT_TRUE(wait_until(
      [&] {
        auto raw = cluster().client(master);
        return raw.command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer +
                   raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >=
               1;
      },
      5s));
  held.unlock();
  const auto [got, took] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(took, 5s) << "woken by the unlock message, not by a lease";

  const std::string queue = name_on(master, "tls-queue:");
  auto in = waiter.blocking_queue(queue);
  auto taken = std::async(std::launch::async, [&in] { return in.poll(10s); });
  // The take waits on the server (BLPOP on a connection of its own) before the offer goes out.
  ASSERT_TRUE(wait_until(
      [&] {
        return cluster()
                   .client(master)
                   .command({"INFO", "clients"})
                   .str.find("blocked_clients:0") == std::string::npos;
      },
      5s))
      << "the take never blocked";
  holder.blocking_queue(queue).offer("over tls");
  EXPECT_EQ(taken.get(), std::optional<std::string>("over tls"));
}

TEST_F(cluster_tls, a_moved_over_tls_leads_to_the_new_owner_by_name_at_its_tls_port) {
  relock::client client(settings());
  const auto masters = cluster().masters();
  const std::string name = name_on(masters[0], "tls-moved:");
  auto lock = client.lock(name);
  lock.lock();
  lock.unlock();  // relock's map now names masters[0] for the slot
  const auto slot = cluster().slot_of(name);
  // A key for MIGRATE to carry, so the move always crosses the TLS bus between the masters.
  const std::string passenger = "{" + name + "}:passenger";
  cluster().client(masters[0]).command({"SET", passenger, "1"});
  cluster().migrate_slot(slot, masters[0], masters[1]);
  EXPECT_EQ(cluster().client(masters[1]).command({"EXISTS", passenger}).integer, 1);
  // The old owner answers MOVED <slot> localhost:<tls-port of masters[1]> over TLS.
  lock.lock();
  EXPECT_EQ(cluster().client(masters[1]).command({"EXISTS", name}).integer, 1);
  lock.unlock();
  cluster().migrate_slot(slot, masters[1], masters[0]);
  EXPECT_EQ(cluster().client(masters[0]).command({"DEL", passenger}).integer, 1);
}

}  // namespace
