// SPDX-License-Identifier: Apache-2.0
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
  // 2 s: the status below must see the element still delayed, and starting the CLI under
  // ASan beside busy tests has taken over half a second.
  EXPECT_EQ(run({"queue", "offer", "later", "soon", "--delay", "2"}).code, 0);
  auto status = run({"--json", "status", "later"});
  EXPECT_NE(status.out.find("\"delayed\":1"), std::string::npos) << status.out;
  EXPECT_EQ(taker.wait(10s), 0) << taker.err();
  EXPECT_EQ(taker.out(), "soon\n");
  EXPECT_GE(steady::now() - offered, 2s);
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

// Issue 31: values of any size and content. argv carries no NUL byte and at most ~128 KiB;
// `-` reads the value from standard input, and take --raw writes it back byte for byte.
TEST_F(cli, queue_values_of_any_bytes_through_stdin_and_raw_take) {
  const std::string binary("a\0b\xff\n", 5);
  auto offered = run({"queue", "offer", "bin", "-"}, 30s, cli_options::with_stdin(binary));
  EXPECT_EQ(offered.code, 0) << offered.err;
  EXPECT_EQ(raw_.command({"LINDEX", "bin", "0"}).str, binary);
  auto taken = run({"queue", "take", "bin", "--raw", "-w", "1"});
  EXPECT_EQ(taken.code, 0) << taken.err;
  EXPECT_EQ(taken.out, binary);  // one newline: the value's own

  std::string large(1 << 20, 'x');  // 1 MiB: far past what argv carries
  for (std::size_t i = 0; i < large.size(); i += 4096) large[i] = static_cast<char>(i / 4096);
  EXPECT_EQ(
      run({"queue", "offer", "big", "-", "--delay", "0"}, 30s, cli_options::with_stdin(large)).code,
      0);
  auto big = run({"queue", "take", "big", "--raw", "-w", "10"});
  EXPECT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(big.out.size(), large.size());
  EXPECT_TRUE(big.out == large);

  // Without --raw a newline follows, as before; an empty value is a value too.
  EXPECT_EQ(run({"queue", "offer", "plain", "-"}, 30s, cli_options::with_stdin("")).code, 0);
  EXPECT_EQ(run({"queue", "take", "plain", "-w", "1"}).out, "\n");
}

TEST_F(cli, a_value_over_the_limit_on_stdin_is_refused_writing_nothing) {
  auto r = run({"queue", "offer", "huge", "-"}, 60s,
               cli_options::with_stdin(std::string(16 * 1024 * 1024 + 1, 'y')));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("over 16777216 bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("huge"));
}

TEST_F(cli, take_does_not_wait_on_a_delayed_queue_of_the_wrong_type) {
  for (const char* key : {"redisson_delay_queue:{q}", "redisson_delay_queue_timeout:{q}"}) {
    SCOPED_TRACE(key);
    raw_.command({"SET", key, "x"});
    const auto started = steady::now();
    auto r = run({"queue", "take", "q", "-w", "20"});
    EXPECT_EQ(r.code, 2);
    EXPECT_LT(steady::now() - started, 10s);  // said so, not waited out
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("another Redis type"), std::string::npos) << r.err;
    raw_.command({"DEL", key});
  }
}

TEST_F(cli, status_says_when_a_delayed_queue_key_holds_the_wrong_type) {
  for (const char* key : {"redisson_delay_queue:{q}", "redisson_delay_queue_timeout:{q}"}) {
    SCOPED_TRACE(key);
    raw_.command({"RPUSH", "q", "a"});
    raw_.command({"SET", key, "x"});
    auto r = run({"status", "q"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("holds a string"), std::string::npos) << r.err;
    EXPECT_EQ(raw_.command({"LLEN", "q"}).integer, 1);  // nothing changed
    raw_.command({"DEL", key, "q"});
  }
}
