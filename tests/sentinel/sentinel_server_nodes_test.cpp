// SPDX-License-Identifier: Apache-2.0
// client::nodes and client::call with Sentinel: the master now, then the URL's sentinels, each
// asked on a connection of its own with the sentinels' credentials (relock doctor reads the
// failover timeouts there).
#include <gtest/gtest.h>

#include <relock/client.hpp>

#include "support/sentinel_set.hpp"

namespace relock::test {

TEST(sentinel_server_nodes, the_master_and_the_sentinels_are_listed_and_answer) {
  auto& set = shared_sentinel_set();
  set.restore();
  relock::config c;
  c.url = set.url();
  relock::client client(c);
  const auto nodes = client.nodes();
  ASSERT_EQ(nodes.size(), 1 + set.sentinel_ports().size());
  EXPECT_EQ(nodes[0].role, relock::node_role::master);
  EXPECT_EQ(nodes[0].address, "127.0.0.1:" + std::to_string(set.master_port()));
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].role, relock::node_role::sentinel);
    const auto master = client.call(nodes[i], {"SENTINEL", "MASTER", set.options().master_name});
    ASSERT_EQ(master.type, relock::server_reply::kind::array) << master.text;
    bool has_timeout = false;
    for (const auto& e : master.elements) has_timeout |= e.text == "down-after-milliseconds";
    EXPECT_TRUE(has_timeout);
  }
}

}  // namespace relock::test
