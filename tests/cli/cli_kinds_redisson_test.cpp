// SPDX-License-Identifier: Apache-2.0
// relock run --kind fair|fenced|spin behind a hold of the real Redisson (Java), once per
// Redisson version built by tests/interop/redisson/prepare (the fenced lock: 4.x only, as
// RFencedLock came with Redisson 4).
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "redisson_driver.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using nlohmann::json;
using steady = std::chrono::steady_clock;

namespace {

class cli_kinds_redisson : public cli, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }

  std::int64_t queue_length(const std::string& name) {
    return raw_.command({"LLEN", "redisson_lock_queue:{" + name + "}"}).integer;
  }
};

// The same, with the Redisson versions that have RFencedLock.
class cli_fenced_redisson : public cli_kinds_redisson {};

// The built jars of Redisson 4 and later; a "missing: ..." entry when there is none, so the
// tests fail (never skip) saying why.
std::vector<std::string> fenced_jars() {
  std::vector<std::string> jars;
  for (const auto& jar : redisson_driver::jar_params()) {
    const auto version = redisson_driver::version_of_jar(jar);
    if (jar.starts_with("missing:") || (!version.empty() && std::stoi(version) >= 4)) {
      jars.push_back(jar);
    }
  }
  if (jars.empty()) jars.push_back("missing: no Redisson 4 driver jar (RFencedLock); see prepare");
  return jars;
}

}  // namespace

TEST_P(cli_kinds_redisson, a_fair_run_queued_behind_java_runs_once_java_unlocks) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("a", "lock fair:line"), true);
  EXPECT_EQ(run({"run", "--kind", "fair", "-n", "line", "--", "true"}).code, 1);

  const auto ran = file("ran");
  cli_process waiting(with_url({"run", "--kind", "fair", "line", "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return queue_length("line") == 1; }, 10s));
  auto status = json::parse(run({"--json", "status", "line"}).out);
  EXPECT_EQ(status["kind"], "fair");
  EXPECT_EQ(status["holders"][0]["owner"], java.owner_field("a"));
  EXPECT_EQ(status["queue"].size(), 1u) << status.dump();

  const auto left = steady::now();
  java.call_ok("a", "unlock fair:line");
  EXPECT_EQ(waiting.wait(10s), 0) << waiting.err();
  // Java's release told the head of the queue on its own channel: no lease ran out.
  EXPECT_LT(steady::now() - left, 5s);
  EXPECT_TRUE(std::filesystem::exists(ran));
  EXPECT_EQ(queue_length("line"), 0);
}

TEST_P(cli_kinds_redisson, a_spin_run_waits_out_a_java_lock_and_runs_after_it) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("a", "lock spun"), true);
  EXPECT_EQ(run({"run", "--kind", "spin", "-n", "spun", "--", "true"}).code, 1);

  const auto ran = file("ran");
  cli_process spinner(with_url({"run", "--kind", "spin", "spun", "--", "touch", ran}));
  EXPECT_FALSE(spinner.wait(500ms)) << "the spin run got in beside Java's lock";
  const auto left = steady::now();
  java.call_ok("a", "unlock spun");
  EXPECT_EQ(spinner.wait(10s), 0) << spinner.err();
  EXPECT_LT(steady::now() - left, 5s) << "its next try, not Java's 30 s lease, let it in";
  EXPECT_TRUE(std::filesystem::exists(ran));
}

TEST_P(cli_fenced_redisson, a_fenced_run_behind_java_gets_a_higher_token) {
  redisson_driver java(GetParam(), server_.url());
  const std::int64_t javas = java.call_ok("a", "lockandgettoken fence");
  EXPECT_EQ(json::parse(run({"--json", "status", "fence"}).out)["fencing_token"], javas);
  EXPECT_EQ(run({"run", "--kind", "fenced", "-n", "fence", "--", "true"}).code, 1);

  cli_process waiting(
      with_url({"run", "--kind", "fenced", "fence", "--", "sh", "-c", "echo \"$RELOCK_TOKEN\""}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("fence"); }, 10s));
  java.call_ok("a", "unlock fenced:fence");
  ASSERT_EQ(waiting.wait(10s), 0) << waiting.err();
  const std::int64_t ours = std::stoll(waiting.out());
  EXPECT_GT(ours, javas);
  // And Java's next token is higher again: one counter for both.
  EXPECT_GT(java.call_ok("a", "lockandgettoken fence").get<std::int64_t>(), ours);
  java.call_ok("a", "unlock fenced:fence");
}

INSTANTIATE_TEST_SUITE_P(redisson, cli_kinds_redisson,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
INSTANTIATE_TEST_SUITE_P(redisson, cli_fenced_redisson, ::testing::ValuesIn(fenced_jars()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
