// SPDX-License-Identifier: Apache-2.0
// `relock status` maps each holder to its process: a relock holder's connections are named
// relock:{id}:{host}:{pid}, so CLIENT LIST on the lock's node names its host, pid and address.
// A holder that no relock connection names (Redisson's, written here by hand) is "unknown";
// a user without CLIENT LIST gets the holders and a line saying why the processes are missing.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"
#include "support/host_name.hpp"

using namespace relock::test;
using json = nlohmann::json;

TEST_F(cli, status_names_a_relock_holders_host_and_pid) {
  relock::client holder(settings_for(server_));
  auto m = holder.lock("mapped");
  m.lock();
  const auto j = json::parse(run({"--json", "status", "mapped"}).out);
  ASSERT_EQ(j["holders"].size(), 1u) << j.dump();
  const auto& process = j["holders"][0]["process"];
  ASSERT_TRUE(process.is_object()) << j.dump();
  EXPECT_EQ(process["host"], host_name());
  EXPECT_EQ(process["pid"], std::to_string(::getpid()));
  EXPECT_NE(process["addr"].get<std::string>().find("127.0.0.1:"), std::string::npos);
  EXPECT_TRUE(j["process_lookup_failed"].is_null());

  const auto text = run({"status", "mapped"});
  EXPECT_NE(text.out.find(host_name() + " pid " + std::to_string(::getpid()) + " (127.0.0.1:"),
            std::string::npos)
      << text.out;
  m.unlock();
}

TEST_F(cli, status_says_unknown_for_a_holder_no_relock_connection_names) {
  // As Redisson leaves it: a hash field "{uuid}:{thread}" with a lease.
  raw_.command({"HSET", "java-held", "6c5f1e0a-0000-4000-8000-000000000001:77", "1"});
  raw_.command({"PEXPIRE", "java-held", "30000"});
  const auto j = json::parse(run({"--json", "status", "java-held"}).out);
  ASSERT_EQ(j["holders"].size(), 1u) << j.dump();
  EXPECT_TRUE(j["holders"][0]["process"].is_null());
  const auto text = run({"status", "java-held"});
  EXPECT_NE(text.out.find(" unknown"), std::string::npos) << text.out;
}

TEST_F(cli, status_without_client_list_rights_says_why_processes_are_missing) {
  raw_.command({"ACL", "SETUSER", "viewer", "on", ">viewer-pw", "~*", "&*", "+@all", "-client"});
  raw_.command({"HSET", "held", "6c5f1e0a-0000-4000-8000-000000000002:1", "1"});
  const std::string url = "redis://viewer:viewer-pw@127.0.0.1:" + std::to_string(server_.port());
  const auto r = run_cli({"--url", url, "--json", "status", "held"}, std::chrono::seconds(30));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_NE(j["process_lookup_failed"].get<std::string>().find("NOPERM"), std::string::npos)
      << j.dump();
}
