// SPDX-License-Identifier: Apache-2.0
// relock queue against a queue that the real Redisson (Java) feeds and drains, once per
// Redisson version built by tests/interop/redisson/prepare.
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "redisson_driver.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using nlohmann::json;

namespace {

class cli_queue_redisson : public cli, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }
};

}  // namespace

TEST_P(cli_queue_redisson, relock_takes_what_java_offers_and_the_reverse) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("a", "qoffer jobs from-java"), true);
  EXPECT_EQ(run({"queue", "size", "jobs"}).out, "1\n");
  EXPECT_EQ(run({"queue", "take", "jobs", "-w", "5"}).out, "from-java\n");
  EXPECT_EQ(run({"queue", "offer", "jobs", "from-relock"}).code, 0);
  EXPECT_EQ(java.call_ok("a", "qtake jobs"), "from-relock");
}

// Java's delayed queue feeds the destination; relock status sees it, and a relock take gets the
// element when due (moved by Java's transfer or by the take's own). The delay leaves room for a
// loaded machine: status must run before Java's transfer moves the element (a 1 s delay was
// not enough under ASan in CI).
TEST_P(cli_queue_redisson, relock_takes_what_javas_delayed_queue_feeds) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("a", "doffer later from-java 4000"), true);
  auto status = json::parse(run({"--json", "status", "later"}).out);
  EXPECT_EQ(status["kind"], "queue");
  EXPECT_EQ(status["delayed"], 1);
  EXPECT_TRUE(status["next_due_in_ms"].is_number());
  auto taken = run({"queue", "take", "later", "-w", "15"});
  EXPECT_EQ(taken.code, 0) << taken.err;
  EXPECT_EQ(taken.out, "from-java\n");
}

INSTANTIATE_TEST_SUITE_P(redisson, cli_queue_redisson,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
