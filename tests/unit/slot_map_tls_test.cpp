// SPDX-License-Identifier: Apache-2.0
// Which ports and names a TLS client takes from a cluster's slot map, and the router that keeps
// refreshed maps at them. No server: the replies are shaped as redis-server 7.0.15 gave them,
// three masters with tls-port, tls-cluster yes, cluster-announce-hostname localhost and
// cluster-preferred-endpoint-type hostname:
//   CLUSTER SHARDS (over plain text or TLS alike): ... id <id> port 17203 tls-port 17303
//     ip 127.0.0.1 endpoint localhost hostname localhost role master ...
//   SET on the wrong node: MOVED 15495 localhost:17203 (plain), localhost:17303 (TLS)
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "support/reply_builders.hpp"
#include "topology/router.hpp"
#include "topology/slot_map.hpp"

namespace slot_map_tls_test {  // keeps this file's names apart in a unity build

namespace {

using relock::resp::reply;
using relock::topology::node;
using relock::topology::port_kind;
using relock::topology::router;
using relock::topology::slot_map;

using relock::test::arr;
using relock::test::num;
using relock::test::str;

// A node as CLUSTER SHARDS gives it; a port of 0 leaves its field out, as Redis does.
reply shard_node(std::int64_t port, std::int64_t tls_port, std::string role,
                 std::string endpoint = "localhost") {
  std::vector<reply> n{str("id"), str("n" + std::to_string(port + tls_port))};
  if (port != 0) n.insert(n.end(), {str("port"), num(port)});
  if (tls_port != 0) n.insert(n.end(), {str("tls-port"), num(tls_port)});
  n.insert(n.end(), {str("ip"), str("127.0.0.1"), str("endpoint"), str(endpoint)});
  if (endpoint == "localhost") n.insert(n.end(), {str("hostname"), str("localhost")});
  n.insert(n.end(), {str("role"), str(std::move(role)), str("replication-offset"), num(14),
                     str("health"), str("online")});
  return arr(std::move(n));
}

reply shard(std::int64_t first, std::int64_t last, std::vector<reply> nodes) {
  return arr({str("slots"), arr({num(first), num(last)}), str("nodes"), arr(std::move(nodes))});
}

// Three masters on 17201-17203 (TLS 17301-17303), one replica each on 17204-17206 (17304-).
// `plain` false: every node runs with port 0, TLS only.
reply tls_shards(bool plain = true, std::string endpoint = "localhost") {
  auto p = [plain](std::int64_t port) { return plain ? port : 0; };
  return arr({
      shard(10923, 16383,
            {shard_node(p(17203), 17303, "master", endpoint),
             shard_node(p(17206), 17306, "replica", endpoint)}),
      shard(0, 5460,
            {shard_node(p(17201), 17301, "master", endpoint),
             shard_node(p(17204), 17304, "replica", endpoint)}),
      shard(5461, 10922,
            {shard_node(p(17202), 17302, "master", endpoint),
             shard_node(p(17205), 17305, "replica", endpoint)}),
  });
}

node at(std::uint16_t port, std::string host = "localhost") { return node{std::move(host), port}; }

// Compared as text: slot_map_test.cpp defines the gtest printers of these types.
std::string master_of(const slot_map& map, std::uint16_t slot) {
  const node* n = map.master_of(slot);
  return n ? n->address() : "none";
}

TEST(slot_map_tls, shards_give_the_plain_ports_and_a_tls_twin_by_the_announced_name) {
  auto map = slot_map::from_shards(tls_shards(), "127.0.0.1");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->ports(), port_kind::plain);
  EXPECT_EQ(master_of(*map, 0), "localhost:17201");
  EXPECT_TRUE(map->for_ports(port_kind::plain) == map);

  auto tls = map->for_ports(port_kind::tls);
  ASSERT_TRUE(tls);
  EXPECT_EQ(tls->ports(), port_kind::tls);
  // By the announced hostname, which the certificate names, not the ip 127.0.0.1.
  EXPECT_EQ(master_of(*tls, 0), "localhost:17301");
  EXPECT_EQ(master_of(*tls, 5461), "localhost:17302");
  EXPECT_EQ(master_of(*tls, 16383), "localhost:17303");
  ASSERT_EQ(tls->replicas_of(0).size(), 1u);
  EXPECT_EQ(tls->replicas_of(0)[0].address(), "localhost:17304");
  EXPECT_TRUE(tls->masters() == (std::vector<node>{at(17301), at(17302), at(17303)}));
  EXPECT_TRUE(tls->covers_all());
  // The TLS map is its own TLS view, and has no plain one.
  EXPECT_TRUE(tls->for_ports(port_kind::tls) == tls);
  EXPECT_FALSE(tls->for_ports(port_kind::plain).has_value());
}

TEST(slot_map_tls, the_same_nodes_at_other_ports_are_another_map) {
  auto map = slot_map::from_shards(tls_shards(), "127.0.0.1");
  ASSERT_TRUE(map);
  EXPECT_FALSE(*map == *map->for_ports(port_kind::tls));
  EXPECT_TRUE(*map == *slot_map::from_shards(tls_shards(), "127.0.0.1"));
}

TEST(slot_map_tls, announced_ips_stay_ips) {
  // cluster-preferred-endpoint-type ip (the default): a certificate must then name the ip.
  auto map = slot_map::from_shards(tls_shards(true, "127.0.0.1"), "localhost");
  ASSERT_TRUE(map);
  EXPECT_EQ(master_of(*map->for_ports(port_kind::tls), 0), "127.0.0.1:17301");
}

TEST(slot_map_tls, a_tls_only_cluster_gives_its_tls_map) {
  std::string why;
  auto map = slot_map::from_shards(tls_shards(false), "127.0.0.1", &why);
  ASSERT_TRUE(map) << why;
  EXPECT_EQ(map->ports(), port_kind::tls);
  EXPECT_EQ(master_of(*map, 0), "localhost:17301");
  EXPECT_FALSE(map->for_ports(port_kind::plain, &why).has_value());
  EXPECT_NE(why.find("no plain-text port"), std::string::npos) << why;
}

TEST(slot_map_tls, a_cluster_without_tls_ports_has_no_tls_map) {
  // tls-cluster no: SHARDS names no tls-port even where the nodes listen for TLS.
  auto plain = tls_shards();
  for (auto& s : plain.elements) {
    for (auto& n : s.elements[3].elements) {
      n.elements.erase(n.elements.begin() + 4, n.elements.begin() + 6);  // "tls-port", N
    }
  }
  auto map = slot_map::from_shards(plain, "127.0.0.1");
  ASSERT_TRUE(map);
  std::string why;
  EXPECT_FALSE(map->for_ports(port_kind::tls, &why).has_value());
  EXPECT_NE(why.find("tls-cluster yes"), std::string::npos) << why;
}

TEST(slot_map_tls, a_node_with_neither_port_is_refused) {
  auto shards = tls_shards(false);
  auto& n = shards.elements[1].elements[3].elements[0];
  n.elements.erase(n.elements.begin() + 2, n.elements.begin() + 4);  // "tls-port", 17301
  std::string why;
  EXPECT_FALSE(slot_map::from_shards(shards, "127.0.0.1", &why).has_value());
  EXPECT_NE(why.find("port"), std::string::npos) << why;
}

TEST(slot_map_tls, slots_are_at_the_ports_of_the_connection_that_asked) {
  auto slots = arr(
      {arr({num(0), num(16383),
            arr({str("localhost"), num(17301), str("n1"), arr({str("ip"), str("127.0.0.1")})})})});
  auto map = slot_map::from_slots(slots, "127.0.0.1", nullptr, port_kind::tls);
  ASSERT_TRUE(map);
  EXPECT_EQ(map->ports(), port_kind::tls);
  EXPECT_EQ(master_of(*map, 0), "localhost:17301");
  EXPECT_EQ(slot_map::from_slots(slots, "127.0.0.1")->ports(), port_kind::plain);
}

TEST(slot_map_tls, a_moved_map_drops_its_tls_twin) {
  auto map = slot_map::from_shards(tls_shards(), "127.0.0.1");
  ASSERT_TRUE(map);
  map->moved(0, at(17202));
  EXPECT_FALSE(map->for_ports(port_kind::tls).has_value()) << "the twin would still say 17301";
}

TEST(router_tls, refreshed_maps_are_kept_at_the_clients_ports) {
  const auto now = std::chrono::steady_clock::now();
  const auto shards = *slot_map::from_shards(tls_shards(), "127.0.0.1");
  router tls(*shards.for_ports(port_kind::tls), port_kind::tls);
  // A refresh hands the router CLUSTER SHARDS as read: the TLS client keeps the TLS ports.
  tls.refreshed(shards, now);
  EXPECT_EQ(master_of(tls.map(), 0), "localhost:17301");
  EXPECT_EQ(tls.map().ports(), port_kind::tls);
  // A MOVED over TLS names the TLS port, which the map then knows.
  tls.moved(0, at(17302));
  EXPECT_EQ(master_of(tls.map(), 0), "localhost:17302");

  router plain(shards);
  plain.refreshed(shards, now);
  EXPECT_EQ(master_of(plain.map(), 0), "localhost:17201");
}

TEST(router_tls, a_map_without_the_clients_ports_keeps_the_old_one) {
  const auto now = std::chrono::steady_clock::now();
  const auto tls_map = *slot_map::from_shards(tls_shards(false), "127.0.0.1");
  router plain(*slot_map::from_shards(tls_shards(), "127.0.0.1"));
  plain.refreshed(tls_map, now);
  EXPECT_EQ(master_of(plain.map(), 0), "localhost:17201");

  router tls(tls_map, port_kind::tls);
  auto ip_only = tls_shards();
  for (auto& s : ip_only.elements) {
    for (auto& n : s.elements[3].elements) {
      n.elements.erase(n.elements.begin() + 4, n.elements.begin() + 6);
    }
  }
  tls.refreshed(*slot_map::from_shards(ip_only, "127.0.0.1"), now);
  EXPECT_EQ(master_of(tls.map(), 0), "localhost:17301");
}

}  // namespace

}  // namespace slot_map_tls_test
