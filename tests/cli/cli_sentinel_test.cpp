// SPDX-License-Identifier: Apache-2.0
// relock run and status with a redis-sentinel:// URL through a failover, on a Sentinel set of
// this process's own (support/sentinel_set.hpp; the cases run as one CTest test).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "cli_process.hpp"
#include "support/sentinel_set.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

std::string address(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace

TEST(cli_sentinel, run_holds_through_a_failover_and_the_next_run_gets_the_lock_after_it) {
  auto& set = shared_sentinel_set();
  set.restore();
  const std::string url = set.url();
  cli_process holder({"--url", url, "run", "moving", "--", "sleep", "6"});
  ASSERT_TRUE(wait_until(
      [&] {
        return set.client(set.master_port()).command({"EXISTS", "moving"}).integer == 1;
      },
      10s, 20ms));
  cli_process waiter({"--url", url, "run", "-w", "60", "moving", "--", "true"});
  const auto started = std::chrono::steady_clock::now();
  const std::uint16_t new_master = set.failover();
  std::cout << "new master " << address(new_master) << " after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - started)
                   .count()
            << " ms\n";

  // The hold was acknowledged by the replica that is master now.
  EXPECT_EQ(set.client(new_master).command({"EXISTS", "moving"}).integer, 1);
  auto status = run_cli({"--url", url, "status", "moving"});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("node " + address(new_master)), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("held"), std::string::npos) << status.out;

  EXPECT_EQ(holder.wait(20s), 0) << holder.err();
  EXPECT_EQ(waiter.wait(20s), 0) << waiter.err();
  EXPECT_EQ(set.client(new_master).command({"EXISTS", "moving"}).integer, 0);
  // Once the old master serves as the replica, lock writes wait for it again: as soon as
  // Sentinel sees it report the replica role (its INFO of a replica comes every 10 s).
  set.restore();
  EXPECT_TRUE(wait_until(
      [&] {
        status = run_cli({"--url", url, "status", "moving"});
        return status.out.find("replica sync: lock writes wait for 1 replica(s)") !=
               std::string::npos;
      },
      25s, 500ms))
      << status.out;
}

TEST(cli_sentinel, a_wrong_sentinel_url_is_named) {
  auto& set = shared_sentinel_set();
  auto r = run_cli({"--url", "redis-sentinel://" + address(set.sentinel_ports().at(0)) + "/nope",
                    "status", "x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no sentinel knows a master named 'nope'"), std::string::npos) << r.err;
}

TEST(cli_sentinel, doctor_checks_the_master_and_warns_on_each_sentinel_of_a_short_lease) {
  auto& set = shared_sentinel_set();
  set.restore();
  // Half of down-after-milliseconds: a failover outlasts the lease.
  const auto lease = std::to_string(static_cast<double>(set.options().down_after.count()) / 2000);
  const auto r = run_cli({"--url", set.url(), "doctor", "--lease", lease}, 60s);
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // warnings only: the set's master is no risk to locks
  std::set<std::string> warned, masters;
  std::istringstream lines(r.out);
  // The table: CHECK NODE STATUS VALUE rows, up to the blank line before the explanations.
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    std::istringstream words(line);
    std::string check, node, status;
    words >> check >> node >> status;
    if (check == "sentinel-down-after") {
      EXPECT_EQ(status, "warn") << line;
      warned.insert(node);
    }
    if (check == "maxmemory-policy") masters.insert(node);
  }
  std::set<std::string> sentinels;
  for (const auto port : set.sentinel_ports()) sentinels.insert(address(port));
  EXPECT_EQ(warned, sentinels) << r.out;
  EXPECT_EQ(masters, std::set<std::string>{address(set.master_port())}) << r.out;
  EXPECT_NE(r.out.find("fix: a lease above twice down-after-milliseconds"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sentinel down-after-milliseconds " + set.options().master_name + " "),
            std::string::npos)
      << r.out;
}
