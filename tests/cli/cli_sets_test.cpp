// SPDX-License-Identifier: Apache-2.0
// `relock run --all` (a multi-lock) and `relock run --redlock` (a quorum of servers) as a user
// meets them: the real binary, real servers, real child processes.
#include <memory>
#include <vector>

#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

TEST_F(cli, run_all_holds_every_name_while_the_command_runs) {
  const auto ready = file("ready");
  cli_process p(with_url({"run", "--all", "a,b,c", "--", "sh", "-c",
                          "echo \"$RELOCK_NAME\"; touch \"$0\"; sleep 1", ready}));
  ASSERT_TRUE(appears(ready));
  EXPECT_TRUE(exists("a") && exists("b") && exists("c"));
  EXPECT_EQ(p.wait(10s), 0) << p.err();
  EXPECT_EQ(p.out(), "a,b,c\n");
  EXPECT_FALSE(exists("a") || exists("b") || exists("c"));
}

// Six runs at once, half naming the locks in the other order, each adding one to a file by a
// read and a write apart: the count comes out exact and nobody deadlocks.
TEST_F(cli, run_all_in_opposite_orders_excludes_without_deadlock) {
  const auto counter = file("count");
  std::vector<std::unique_ptr<cli_process>> runs;
  for (int i = 0; i < 6; ++i) {
    runs.push_back(std::make_unique<cli_process>(with_url(
        {"run", "--all", i % 2 == 0 ? "x,y" : "y,x", "--", "sh", "-c",
         "n=$(cat \"$0\" 2>/dev/null || echo 0); sleep 0.05; echo $((n + 1)) > \"$0\"", counter})));
  }
  for (auto& r : runs) EXPECT_EQ(r->wait(60s), 0) << r->err();
  auto r = run({"run", "--all", "x,y", "--", "cat", counter});
  EXPECT_EQ(r.out, "6\n") << r.err;
}

TEST_F(cli, run_all_gives_up_holding_nothing_when_one_name_is_held) {
  relock::client holder(settings_for(server_));
  holder.lock("b").lock(60s);
  auto r = run({"run", "--all", "a,b", "-w", "0.3", "--", "true"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("'a,b' is held"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("a"));
}

TEST_F(cli, run_redlock_holds_a_quorum_of_servers) {
  redis_server second, third;
  const std::string urls = server_.url() + "," + second.url() + "," + third.url();
  // Someone else holds the name on the third server alone: two of three is a quorum.
  relock::client other(settings_for(third));
  other.lock("r").lock(60s);
  const auto ready = file("ready");
  cli_process p({"run", "--redlock", urls, "r", "--", "sh", "-c",
                 "echo \"$RELOCK_NAME\"; touch \"$0\"; sleep 1", ready});
  ASSERT_TRUE(appears(ready));
  EXPECT_TRUE(exists("r"));
  EXPECT_EQ(raw_client::to(second).command({"EXISTS", "r"}).integer, 1);
  EXPECT_EQ(raw_client::to(third).command({"HLEN", "r"}).integer, 1);  // still theirs alone
  EXPECT_EQ(p.wait(10s), 0) << p.err();
  EXPECT_EQ(p.out(), "r\n");
  EXPECT_FALSE(exists("r"));
  EXPECT_EQ(raw_client::to(second).command({"EXISTS", "r"}).integer, 0);

  // Held on two of three: no quorum, exit 1 after the wait, nothing left behind.
  relock::client also(settings_for(second));
  also.lock("r").lock(60s);
  auto refused = run_cli({"run", "--redlock", urls, "-w", "0.3", "r", "--", "true"});
  EXPECT_EQ(refused.code, 1) << refused.err;
  EXPECT_FALSE(exists("r"));
}

TEST_F(cli, sets_that_cannot_work_are_usage_errors) {
  redis_server second;
  EXPECT_EQ(
      run_cli({"run", "--redlock", server_.url() + "," + second.url(), "r", "--", "true"}).code, 2);
  EXPECT_EQ(run({"run", "--all", "a,a", "--", "true"}).code, 2);
  EXPECT_EQ(run({"run", "--kind", "fenced", "--all", "a,b", "--", "true"}).code, 2);
  EXPECT_EQ(run({"run", "--all", "a,b", "--redlock", server_.url(), "r", "--", "true"}).code, 2);
  EXPECT_FALSE(exists("a"));
}

// Issue 30: one server reached by two addresses is one vote, not two.
TEST_F(cli, run_redlock_refuses_one_server_named_twice) {
  redis_server third;
  const std::string same = "redis://localhost:" + std::to_string(server_.port());
  auto r = run_cli(
      {"run", "--redlock", server_.url() + "," + same + "," + third.url(), "r", "--", "true"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("same server"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("r"));
  EXPECT_EQ(raw_client::to(third).command({"EXISTS", "r"}).integer, 0);
}

// Issue 31: --all's list is taken as typed. An empty member was dropped, and with nothing left
// the word after --all's list became NAME: `--all , -- CMD` ran CMD holding a lock named "--".
TEST_F(cli, run_all_refuses_a_list_with_an_empty_member) {
  const std::vector<std::vector<std::string>> lists{
      {"run", "--all", ",", "--", "true"},
      {"run", "--all", ",,", "x", "--", "true"},
      {"run", "--all", "a,,b", "--", "true"},
      {"run", "--all", "a,b,", "--", "true"},
      {"run", "--all", "", "--", "true"},
      {"run", "--redlock", ",,", "r", "--", "true"},  // --redlock's list is taken the same way
  };
  for (const auto& args : lists) {
    SCOPED_TRACE(args[1] + " '" + args[2] + "'");
    auto r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  }
  EXPECT_EQ(raw_.command({"DBSIZE"}).integer, 0);  // no lock named "--", "x", "a" or "b"
}
