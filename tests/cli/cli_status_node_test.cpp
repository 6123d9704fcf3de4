// SPDX-License-Identifier: Apache-2.0
// `relock status` names the server that serves the name: on one server, that server (the
// cluster's master of the slot is tested in cli_cluster_test.cpp).
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

using namespace relock::test;
using json = nlohmann::json;

TEST_F(cli, status_names_the_server_that_serves_the_name) {
  const std::string address = "127.0.0.1:" + std::to_string(server_.port());
  auto j = json::parse(run({"--json", "status", "anywhere"}).out);
  EXPECT_EQ(j["node"], address);
  auto text = run({"status", "anywhere"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("anywhere: nothing there (no key of that name; a lock of it is free)\n"
                          "  node " +
                          address + "\n"),
            std::string::npos)
      << text.out;
}
