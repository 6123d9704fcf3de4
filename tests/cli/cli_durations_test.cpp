// SPDX-License-Identifier: Apache-2.0
// Durations on relock's command line: plain decimal seconds only, each refusal naming its flag,
// decided before Redis is asked anything.
#include "cli_fixture.hpp"
#include "support/free_port.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

struct refused_case {
  std::vector<std::string> flags;
  std::string flag_named;
};

}  // namespace

TEST_F(cli, durations_other_than_plain_decimal_seconds_are_refused_naming_the_flag) {
  for (const auto& c : std::vector<refused_case>{{{"-w", ""}, "--wait"},
                                                 {{"-w", "0x10"}, "--wait"},
                                                 {{"-w", "nan"}, "--wait"},
                                                 {{"-w", "inf"}, "--wait"},
                                                 {{"-w", "-1"}, "--wait"},
                                                 {{"-w", "1e999"}, "--wait"},
                                                 {{"-w", "1e3"}, "--wait"},
                                                 {{"-w", " 1"}, "--wait"},
                                                 {{"-w", "1.2.3"}, "--wait"},
                                                 {{"-w", "99999999999"}, "--wait"},
                                                 {{"--lease", "0x1p3"}, "--lease"},
                                                 {{"--lease", "0"}, "--lease"},
                                                 {{"--lease", "nan"}, "--lease"}}) {
    std::vector<std::string> args{"run"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.insert(args.end(), {"d", "--", "true"});
    auto r = run(args);
    const auto shown = testing::PrintToString(c.flags);
    EXPECT_EQ(r.code, 2) << shown;
    EXPECT_EQ(lines(r.err), 1u) << shown << r.err;
    EXPECT_NE(r.err.find(c.flag_named), std::string::npos) << shown << r.err;
  }
  auto watchdog = run({"--watchdog-timeout", "1e1", "status", "d"});
  EXPECT_EQ(watchdog.code, 2);
  EXPECT_NE(watchdog.err.find("--watchdog-timeout"), std::string::npos) << watchdog.err;
  EXPECT_FALSE(exists("d"));  // nothing was ever taken
}

TEST_F(cli, nan_is_not_called_negative_and_negative_is) {
  auto nan = run({"run", "-w", "nan", "d", "--", "true"});
  EXPECT_EQ(nan.err.find("negative"), std::string::npos) << nan.err;
  EXPECT_NE(nan.err.find("not a number"), std::string::npos) << nan.err;
  auto negative = run({"run", "-w", "-1", "d", "--", "true"});
  EXPECT_NE(negative.err.find("must not be negative"), std::string::npos) << negative.err;
}

TEST_F(cli, a_refused_duration_is_refused_before_redis_is_asked) {
  const closed_port dead_server;
  const std::uint16_t dead_port = dead_server.port();
  auto r = run_cli({"--url", "redis://127.0.0.1:" + std::to_string(dead_port), "run", "-w", "inf",
                    "d", "--", "true"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--wait"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unreachable"), std::string::npos) << r.err;
}

TEST_F(cli, plain_decimal_durations_still_work) {
  for (const char* wait : {"0.5", "10", ".5", "0.0001"}) {
    auto r = run({"run", "-w", wait, "d", "--", "true"});
    EXPECT_EQ(r.code, 0) << wait << ": " << r.err;
  }
  auto leased = run({"run", "--lease", "2.5", "d", "--", "true"});
  EXPECT_EQ(leased.code, 0) << leased.err;
  auto watchdog = run({"--watchdog-timeout", "1.5", "run", "d", "--", "true"});
  EXPECT_EQ(watchdog.code, 0) << watchdog.err;
}
