// SPDX-License-Identifier: Apache-2.0
// Issue 30: `relock run --redlock` starts with a majority. A server that does not answer at
// start (SIGSTOPped: the kernel takes the connection, Redis says nothing) costs its vote, as
// one lost later does, and -w bounds the whole attempt, connecting included.
#include <chrono>
#include <iostream>
#include <string>

#include "cli_fixture.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

using clock_type = std::chrono::steady_clock;

long long ms_since(clock_type::time_point from) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - from).count();
}

}  // namespace

TEST_F(cli, run_redlock_with_one_server_stopped_runs_on_the_other_two_within_the_wait) {
  redis_server second, stopped;
  stopped.pause();
  const std::string urls = server_.url() + "," + second.url() + "," + stopped.url();
  const auto ready = file("ready");
  const auto started = clock_type::now();
  cli_process p({"run", "--redlock", urls, "-w", "2", "r", "--", "sh", "-c",
                 "touch \"$0\"; sleep 0.5", ready});
  ASSERT_TRUE(appears(ready)) << p.err();
  const auto to_command = ms_since(started);
  std::cout << "[ figure ] one of three stopped, -w 2: the command ran after " << to_command
            << " ms\n";
  EXPECT_LT(to_command, 5'000);  // 10 s would be the library's connect timeout
  EXPECT_TRUE(exists("r"));
  EXPECT_EQ(raw_client::to(second).command({"EXISTS", "r"}).integer, 1);
  EXPECT_EQ(p.wait(10s), 0) << p.err();
  // A note says which server has no vote, and the lock is released on the two that voted.
  EXPECT_NE(p.err().find(stopped.url() + " ("), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("no vote"), std::string::npos) << p.err();
  EXPECT_FALSE(exists("r"));
  EXPECT_EQ(raw_client::to(second).command({"EXISTS", "r"}).integer, 0);
  stopped.resume();
  EXPECT_EQ(raw_client::to(stopped).command({"EXISTS", "r"}).integer, 0);
}

TEST_F(cli, run_redlock_with_two_servers_stopped_fails_within_the_wait_naming_them) {
  redis_server stopped_a, stopped_b;
  stopped_a.pause();
  stopped_b.pause();
  const std::string urls = stopped_a.url() + "," + server_.url() + "," + stopped_b.url();
  const auto started = clock_type::now();
  auto r = run_cli({"run", "--redlock", urls, "-w", "2", "r", "--", "true"});
  const auto took = ms_since(started);
  std::cout << "[ figure ] two of three stopped, -w 2: exit " << r.code << " after " << took
            << " ms\n";
  EXPECT_EQ(r.code, 2) << r.err;  // Redis unreachable, as when two go away after the start
  EXPECT_LT(took, 5'000);
  EXPECT_NE(r.err.find("2 of 3 --redlock servers did not answer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(stopped_a.url()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(stopped_b.url()), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(server_.url()), std::string::npos) << r.err;
  EXPECT_FALSE(exists("r"));
  stopped_a.resume();
  stopped_b.resume();
}

// One server, one vote still holds among the servers that answer: a stopped third does not
// hide that the other two are one server.
TEST_F(cli, run_redlock_refuses_one_server_named_twice_beside_a_stopped_one) {
  redis_server stopped;
  stopped.pause();
  const std::string same = "redis://localhost:" + std::to_string(server_.port());
  auto r = run_cli({"run", "--redlock", server_.url() + "," + same + "," + stopped.url(), "-w", "2",
                    "r", "--", "true"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("same server"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("r"));
  stopped.resume();
}
