// SPDX-License-Identifier: Apache-2.0
// client::nodes and client::call in a Cluster: every master of the slot map, each answering a
// command of its own (what relock top and relock doctor ask of each master).
#include <gtest/gtest.h>

#include <set>

#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/redis_cluster.hpp"

using namespace relock::test;

TEST(cluster_server_nodes, every_master_is_listed_and_answers_for_itself) {
  cluster().restore();
  relock::client client(cluster_settings());
  std::set<std::string> expected, listed;
  for (const auto& m : cluster().masters()) expected.insert(m.address());
  for (const auto& n : client.nodes()) {
    EXPECT_EQ(n.role, relock::node_role::master);
    listed.insert(n.address);
    // Each answers with its own id: the command went to that node, not to a key's slot.
    const auto myid = client.call(n, {"CLUSTER", "MYID"});
    EXPECT_EQ(myid.text.size(), 40u) << myid.text;
    const auto nodes = client.call(n, {"CLUSTER", "NODES"}).text;
    const auto port = n.address.substr(n.address.rfind(':'));
    EXPECT_NE(nodes.find(myid.text + " 127.0.0.1" + port), std::string::npos) << nodes;
  }
  EXPECT_EQ(listed, expected);
}
