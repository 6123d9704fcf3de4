// SPDX-License-Identifier: Apache-2.0
// Messages that say what is there (issue 31): each refusal names the problem in one line, names
// with control bytes come out escaped, and each subcommand's --help lists its own exit codes.
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace cli_messages_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_F(cli, status_on_a_name_that_holds_nothing_says_so) {
  auto text = run({"status", "missing"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(has(text.out, "missing: nothing there (no key of that name; a lock of it is free)"))
      << text.out;
  EXPECT_FALSE(has(text.out, "kind lock")) << text.out;
  auto j = json::parse(run({"--json", "status", "missing"}).out);
  EXPECT_EQ(j["kind"], "none");
  EXPECT_EQ(j["locked"], false);
}

TEST_F(cli, a_too_short_watchdog_is_refused_before_connecting) {
  // No server: a refusal up front does not depend on one.
  auto r = run_cli(
      {"--url", "redis://127.0.0.1:1", "--watchdog-timeout", "0.001", "run", "w", "--", "true"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "--watchdog-timeout '0.001' is under 1 s")) << r.err;
  EXPECT_EQ(run({"--watchdog-timeout", "1", "run", "w", "--", "true"}).code, 0);
}

TEST_F(cli, a_semaphore_count_is_plain_decimal) {
  for (const char* n : {"0x10", "1e3", "0b1", "+3", ""}) {
    SCOPED_TRACE(n);
    auto r = run({"run", "--semaphore", n, "s", "--", "true"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
  EXPECT_TRUE(has(run({"run", "--semaphore", "0x10", "s", "--", "true"}).err,
                  "'0x10' is not a plain decimal number"));
  EXPECT_FALSE(exists("s"));
}

TEST_F(cli, a_missing_name_is_named) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--", "true"},
        std::vector<std::string>{"run", "-w", "1", "--", "echo", "hi"}}) {
    auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(has(r.err, "NAME: missing")) << r.err;
    EXPECT_FALSE(has(r.err, "COMMAND: missing")) << r.err;
  }
  EXPECT_FALSE(exists("true"));
  EXPECT_FALSE(exists("echo"));
  auto no_command = run({"run", "x"});
  EXPECT_EQ(no_command.code, 2);
  EXPECT_TRUE(has(no_command.err, "COMMAND: missing")) << no_command.err;
  EXPECT_EQ(run({"run", "x", "--", "x"}).code, 127);  // a command named as the lock is fine
}

TEST_F(cli, an_unreachable_redlock_server_points_at_redlock_not_url) {
  redis_server second, third;
  // One server away costs its vote, not the run (issue 30): a one-line note names it.
  const std::string one_away = server_.url() + "," + second.url() + ",redis://127.0.0.1:1";
  auto r = run_cli({"run", "--redlock", one_away, "r", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "redis://127.0.0.1:1 (")) << r.err;
  EXPECT_FALSE(has(r.err, "--url")) << r.err;
  // Two away leave no majority: exit 2, one line, pointing at --redlock.
  const std::string two_away = "redis://127.0.0.1:1," + second.url() + ",redis://127.0.0.1:2";
  auto none = run_cli({"run", "--redlock", two_away, "r", "--", "true"});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(lines(none.err), 1u) << none.err;
  EXPECT_TRUE(has(none.err, "fix their URLs in --redlock")) << none.err;
  EXPECT_FALSE(has(none.err, "--url")) << none.err;
  auto bad = run_cli(
      {"run", "--redlock", "http://x," + second.url() + "," + third.url(), "r", "--", "true"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "--redlock: bad Redis URL 'http://x'")) << bad.err;
  EXPECT_FALSE(has(bad.err, "--url")) << bad.err;
}

// A delayed offer onto a name whose delayed queue's keys hold strings: the script's WRONGTYPE
// reaches the user without the SHA and line Redis adds.
TEST_F(cli, an_error_from_a_script_names_the_problem_not_the_script) {
  raw_.command({"SET", "redisson_delay_queue_timeout:{q}", "x"});
  auto take = run({"queue", "take", "q", "-w", "5"});
  EXPECT_EQ(take.code, 2);
  EXPECT_EQ(lines(take.err), 1u) << take.err;
  EXPECT_TRUE(has(take.err, "WRONGTYPE")) << take.err;
  EXPECT_FALSE(has(take.err, "user_script")) << take.err;
  EXPECT_FALSE(has(take.err, "script:")) << take.err;
}

TEST_F(cli, a_name_with_a_newline_is_printed_escaped) {
  raw_.command({"SET", "two\nlines", "x"});
  auto refused = run({"status", "two\nlines"});
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(lines(refused.err), 1u) << refused.err;
  EXPECT_TRUE(has(refused.err, "'two\\nlines'")) << refused.err;
  auto shown = run({"status", "tab\there"});
  EXPECT_EQ(shown.code, 0) << shown.err;
  EXPECT_TRUE(has(shown.out, "tab\\there: nothing there")) << shown.out;
  auto j = json::parse(run({"--json", "status", "tab\there"}).out);
  EXPECT_EQ(j["name"], "tab\there");  // JSON carries the name as it is

  // A byte that is not UTF-8 cannot be in JSON: it becomes U+FFFD (the dump threw before).
  auto bytes = run({"--json", "status",
                    "a\xff"
                    "b"});
  EXPECT_EQ(bytes.code, 0) << bytes.err;
  EXPECT_EQ(json::parse(bytes.out)["name"],
            "a\xef\xbf\xbd"
            "b")
      << bytes.out;
}

TEST_F(cli, each_subcommands_help_lists_its_own_exit_codes) {
  auto run_help = run_cli({"run", "--help"});
  EXPECT_EQ(run_help.code, 0);
  EXPECT_TRUE(has(run_help.out, "126/127")) << run_help.out;
  EXPECT_FALSE(has(run_help.out, "unlock:")) << run_help.out;
  EXPECT_FALSE(has(run_help.out, "demo:")) << run_help.out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "--help"}, std::vector<std::string>{"unlock", "--help"},
        std::vector<std::string>{"queue", "take", "--help"},
        std::vector<std::string>{"semaphore", "release", "--help"},
        std::vector<std::string>{"demo", "--help"}}) {
    SCOPED_TRACE(args[0]);
    auto help = run_cli(args);
    EXPECT_EQ(help.code, 0);
    EXPECT_TRUE(has(help.out, "Exit codes:")) << help.out;
    for (const char* other : {"126/127", "128+N", "run:", "the lock was lost"}) {
      EXPECT_FALSE(has(help.out, other)) << other << "\n" << help.out;
    }
  }
  EXPECT_TRUE(has(run_cli({"--help"}).out, "126/127"));  // the whole list, at the top
}

}  // namespace cli_messages_test
