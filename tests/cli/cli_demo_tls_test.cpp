// SPDX-License-Identifier: Apache-2.0
// relock demo --tls: a private redis-server that speaks TLS only, its certificate from a CA the
// demo makes for the run; and what demo --tls refuses.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include "cli_process.hpp"
#include "support/redis_server.hpp"
#include "support/tls_files.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;

TEST(cli_demo_tls, demo_tls_runs_on_a_private_tls_only_server_with_its_own_ca) {
  const tls_files elsewhere;  // a CA for other servers, in the environment
  auto r = run_cli({"--json", "demo", "--tls", "--workers", "2", "--iterations", "20"}, 60s,
                   cli_options::with_env({{"RELOCK_URL", ""},
                                          // Meant for other servers: the demo's own CA wins.
                                          {"RELOCK_TLS_CA", elsewhere.ca()}}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["private_server"], true);
  EXPECT_EQ(j["count"], 40);
  EXPECT_EQ(std::string(j["url"]).rfind("rediss://127.0.0.1:", 0), 0u) << j["url"];
  // "... from a throwaway CA (/tmp/relock-demo-XXXXXX/ca.crt)": gone with the demo.
  const auto from = r.err.find("throwaway CA (");
  ASSERT_NE(from, std::string::npos) << r.err;
  const auto ca = r.err.substr(from + 14, r.err.find(')', from) - from - 14);
  EXPECT_TRUE(ca.ends_with("/ca.crt")) << ca;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(ca).parent_path())) << ca;
}

// Given a rediss:// URL, the demo runs there; its workers get the TLS settings too.
TEST(cli_demo_tls, demo_tls_runs_on_the_rediss_url_given_with_the_tls_flags) {
  const tls_files t;
  redis_server server({.tls_cert_file = t.server_cert(),
                       .tls_key_file = t.server_key(),
                       .tls_ca_file = t.ca(),
                       .tls_auth_clients = false});
  auto r =
      run_cli({"--url", server.tls_url("127.0.0.1"), "--tls-ca", t.ca(), "--tls-server-name",
               "redis.test", "--json", "demo", "--tls", "--workers", "2", "--iterations", "20"},
              60s);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["private_server"], false);
  EXPECT_EQ(j["count"], 40);
}

TEST(cli_demo_tls, demo_tls_refuses_a_plain_url_and_a_private_cluster) {
  auto plain = run_cli({"--url", "redis://127.0.0.1:1", "demo", "--tls"});
  EXPECT_EQ(plain.code, 2);
  EXPECT_NE(plain.err.find("no rediss:// URL"), std::string::npos) << plain.err;
  auto cluster =
      run_cli({"demo", "--tls", "--cluster"}, 30s, cli_options::with_env({{"RELOCK_URL", ""}}));
  EXPECT_EQ(cluster.code, 2);
  EXPECT_NE(cluster.err.find("rediss-cluster://"), std::string::npos) << cluster.err;
}
