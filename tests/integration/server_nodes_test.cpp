// SPDX-License-Identifier: Apache-2.0
// client::nodes and client::call on one server: the master it knows, a command's reply as the
// server typed it, an error reply handed back, and what is refused before any I/O.
#include <gtest/gtest.h>

#include <relock/client.hpp>

#include "support/lock_env.hpp"

namespace server_nodes_test {  // keeps this file's names apart in a unity build

using relock::errc;
using relock::node_role;
using relock::server_reply;
using relock::test::redis_server;

TEST(server_nodes, one_server_is_one_master_that_answers_commands) {
  redis_server server;
  relock::client client(relock::test::settings_for(server));
  const auto nodes = client.nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].address, "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(nodes[0].role, node_role::master);

  const auto info = client.call(nodes[0], {"INFO", "server"});
  EXPECT_EQ(info.type, server_reply::kind::string);
  EXPECT_NE(info.text.find("redis_version:"), std::string::npos);
  const auto time = client.call(nodes[0], {"TIME"});
  ASSERT_EQ(time.type, server_reply::kind::array);
  EXPECT_EQ(time.elements.size(), 2u);
  const auto policy = client.call(nodes[0], {"CONFIG", "GET", "maxmemory-policy"});
  ASSERT_EQ(policy.elements.size(), 2u);
  EXPECT_EQ(policy.elements[1].text, "noeviction");
}

TEST(server_nodes, an_error_reply_is_returned_and_bad_calls_are_refused) {
  redis_server server;
  relock::client client(relock::test::settings_for(server));
  const auto node = client.nodes().at(0);
  const auto unknown = client.call(node, {"NO-SUCH-COMMAND"});
  EXPECT_TRUE(unknown.is_error());
  EXPECT_NE(unknown.text.find("unknown command"), std::string::npos) << unknown.text;

  EXPECT_EQ(relock::test::error_of([&] { client.call(node, {}); }), errc::invalid_argument);
  EXPECT_EQ(relock::test::error_of([&] { client.call({"127.0.0.1:1"}, {"PING"}); }),
            errc::invalid_argument);
  EXPECT_EQ(relock::test::error_of([&] {
              client.call({"127.0.0.1:1", node_role::sentinel}, {"PING"});
            }),
            errc::invalid_argument);
}

}  // namespace server_nodes_test
