// SPDX-License-Identifier: Apache-2.0
// relock run -s/-x and status on a read-write lock that the real Redisson (Java) holds, once per
// Redisson version built by tests/interop/redisson/prepare.
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "redisson_driver.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using nlohmann::json;

namespace {

class cli_redisson : public cli, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }
};

}  // namespace

TEST_P(cli_redisson, a_java_reader_shares_with_relock_readers_and_keeps_writers_out) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("a", "lock read:doc"), true);

  auto status = json::parse(run({"--json", "status", "doc"}).out);
  EXPECT_EQ(status["kind"], "read-write");
  EXPECT_EQ(status["mode"], "read");
  ASSERT_EQ(status["holders"].size(), 1u);
  EXPECT_EQ(status["holders"][0]["owner"], java.owner_field("a"));
  EXPECT_EQ(status["holders"][0]["side"], "read");

  auto reader = run({"run", "-s", "-n", "doc", "--", "true"});
  EXPECT_EQ(reader.code, 0) << "a relock reader shares with Java's: " << reader.err;
  EXPECT_EQ(run({"run", "-x", "-n", "doc", "--", "true"}).code, 1) << "a writer got in";

  // A relock writer waits, and gets in once the Java reader leaves.
  const auto wrote = file("wrote");
  cli_process writer(with_url({"run", "-x", "-w", "30", "doc", "--", "touch", wrote}));
  ASSERT_TRUE(wait_until(
      [&] {
        return raw_.command({"PUBSUB", "NUMSUB", "redisson_rwlock:{doc}"}).elements.at(1).integer >=
               1;
      },
      10s));
  const auto left = std::chrono::steady_clock::now();
  java.call_ok("a", "unlock read:doc");
  EXPECT_EQ(writer.wait(10s), 0) << writer.err();
  EXPECT_LT(std::chrono::steady_clock::now() - left, 5s) << "woke on the message, not the lease";
  EXPECT_TRUE(std::filesystem::exists(wrote));
}

TEST_P(cli_redisson, a_java_writer_keeps_relock_readers_waiting_until_it_leaves) {
  redisson_driver java(GetParam(), server_.url());
  ASSERT_EQ(java.call_ok("w", "lock write:doc"), true);
  EXPECT_EQ(json::parse(run({"--json", "status", "doc"}).out)["mode"], "write");
  EXPECT_EQ(run({"run", "-s", "-n", "doc", "--", "true"}).code, 1);
  const auto read = file("read");
  cli_process reader(with_url({"run", "-s", "-w", "30", "doc", "--", "touch", read}));
  EXPECT_FALSE(reader.wait(500ms)) << "a reader got in beside Java's writer";
  java.call_ok("w", "unlock write:doc");
  EXPECT_EQ(reader.wait(10s), 0) << reader.err();
  EXPECT_TRUE(std::filesystem::exists(read));
}

INSTANTIATE_TEST_SUITE_P(redisson, cli_redisson, ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
