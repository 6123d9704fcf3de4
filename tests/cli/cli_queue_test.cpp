// `relock queue` and `relock status` on a queue, as a user meets them: the real binary, a real
// Redis.
#include "cli_fixture.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

TEST_F(cli, queue_offer_size_and_take_share_redissons_list) {
  EXPECT_EQ(run({"queue", "offer", "jobs", "first one"}).code, 0);
  EXPECT_EQ(run({"queue", "offer", "jobs", "second"}).code, 0);
  EXPECT_EQ(raw_.command({"LINDEX", "jobs", "0"}).str, "first one");
  EXPECT_EQ(run({"queue", "size", "jobs"}).out, "2\n");
  auto status = run({"status", "jobs"});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("queue, 2 elements ready"), std::string::npos) << status.out;
  EXPECT_EQ(run({"queue", "take", "jobs"}).out, "first one\n");
  EXPECT_EQ(run({"queue", "take", "jobs", "-w", "1"}).out, "second\n");
  const auto started = steady::now();
  auto empty = run({"queue", "take", "jobs", "-w", "0.3"});
  EXPECT_EQ(empty.code, 1);
  EXPECT_GE(steady::now() - started, 300ms);
  EXPECT_NE(empty.err.find("nothing came"), std::string::npos) << empty.err;
}

TEST_F(cli, a_delayed_offer_reaches_a_waiting_take_once_due) {
  cli_process taker(with_url({"queue", "take", "later", "-w", "10"}));
  const auto offered = steady::now();
  EXPECT_EQ(run({"queue", "offer", "later", "soon", "--delay", "0.5"}).code, 0);
  auto status = run({"--json", "status", "later"});
  EXPECT_NE(status.out.find("\"delayed\":1"), std::string::npos) << status.out;
  EXPECT_EQ(taker.wait(10s), 0) << taker.err();
  EXPECT_EQ(taker.out(), "soon\n");
  EXPECT_GE(steady::now() - offered, 500ms);
}

TEST_F(cli, queue_bad_input_is_a_usage_error_that_writes_nothing) {
  raw_.command({"SET", "str", "x"});
  EXPECT_EQ(run({"queue", "offer", "str", "v"}).code, 2);
  EXPECT_EQ(run({"queue", "offer", "str", "v", "--delay", "1"}).code, 2);
  EXPECT_EQ(run({"queue", "offer", "", "v"}).code, 2);
  EXPECT_EQ(run({"queue", "offer", "q", "v", "--delay", "-1"}).code, 2);
  EXPECT_EQ(run({"queue", "take", "str", "-w", "0.1"}).code, 2);
  EXPECT_EQ(run({"queue"}).code, 2);
  EXPECT_EQ(raw_.command({"GET", "str"}).str, "x");
  EXPECT_FALSE(exists("q"));
  EXPECT_FALSE(exists("redisson_delay_queue:{q}"));
}
