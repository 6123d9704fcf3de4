// SPDX-License-Identifier: Apache-2.0
// relock under an ACL user that may not touch a name: exit 2, the server's words, and where the
// rules relock needs are written.
#include <gtest/gtest.h>

#include "cli_process.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"

using namespace std::chrono_literals;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::run_cli;

TEST(cli_acl, a_name_the_acl_user_may_not_touch_is_exit_2_pointing_at_the_rules) {
  redis_server server({.password = "admin-pw",
                       .extra_config = {"user app on >app-pw resetkeys resetchannels -@all "
                                        "+@all ~app:* ~*{app:* &*"}});
  const std::string url = "redis://app:app-pw@127.0.0.1:" + std::to_string(server.port());
  auto ok = run_cli({"--url", url, "run", "-n", "app:job", "--", "true"}, 30s);
  EXPECT_EQ(ok.code, 0) << ok.err;
  auto refused = run_cli({"--url", url, "run", "-n", "other:job", "--", "true"}, 30s);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("NOPERM"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("Least privilege"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("app-pw"), std::string::npos) << "no password shown";
  auto raw = raw_client::to(server);
  EXPECT_EQ(raw.command({"EXISTS", "other:job"}).integer, 0);
}
