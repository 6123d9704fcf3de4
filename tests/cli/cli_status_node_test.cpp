// SPDX-License-Identifier: Apache-2.0
// `relock status` names the server that serves the name: on one server, that server (the
// cluster's master of the slot is tested in cli_cluster_test.cpp), and what runs there, as its
// INFO says: "redis 7.0.15", "valkey 9.1.2".
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

using namespace relock::test;
using json = nlohmann::json;

TEST_F(cli, status_names_the_server_that_serves_the_name) {
  const std::string address = "127.0.0.1:" + std::to_string(server_.port());
  auto j = json::parse(run({"--json", "status", "anywhere"}).out);
  EXPECT_EQ(j["node"], address);
  const std::string server = j["server"];
  const std::string info = raw_.command({"INFO", "server"}).str;
  const bool valkey = info.find("server_name:valkey") != std::string::npos;
  const std::string version_field = valkey ? "valkey_version:" : "redis_version:";
  const auto at = info.find(version_field) + version_field.size();
  const std::string version = info.substr(at, info.find('\r', at) - at);
  EXPECT_EQ(server, (valkey ? "valkey " : "redis ") + version);
  auto text = run({"status", "anywhere"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("anywhere: nothing there (no key of that name; a lock of it is free)\n"
                          "  node " +
                          address + " (" + server + ")\n"),
            std::string::npos)
      << text.out;
}
