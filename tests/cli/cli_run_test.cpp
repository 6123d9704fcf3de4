// SPDX-License-Identifier: Apache-2.0
// `relock run` as a user meets it: the real binary, a real Redis, real child processes.
#include <signal.h>

#include <fstream>

#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

TEST_F(cli, run_passes_the_exit_status_through_and_128_plus_signal) {
  EXPECT_EQ(run({"run", "st", "--", "sh", "-c", "exit 7"}).code, 7);
  EXPECT_EQ(run({"run", "st", "--", "sh", "-c", "kill -KILL $$"}).code, 128 + SIGKILL);
  EXPECT_FALSE(exists("st"));  // released after a death by signal too
  auto missing = run({"run", "st", "--", "no-such-program-relock"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_EQ(lines(missing.err), 1u) << missing.err;
  EXPECT_EQ(run({"run", "st", "--", "/dev/null"}).code, 126);
  EXPECT_FALSE(exists("st"));
}

TEST_F(cli, run_passes_stdin_stdout_stderr_and_the_name_to_the_command) {
  auto r = run({"run", "io", "--", "sh", "-c", "cat; echo \"$RELOCK_NAME\"; echo note >&2"}, 30s,
               cli_options::with_stdin("hello\n"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "hello\nio\n");
  EXPECT_EQ(r.err, "note\n");
  // An outer relock's fencing token is not passed on as if it were this lock's.
  auto token = run({"run", "io", "--", "sh", "-c", "test -z \"${RELOCK_TOKEN+set}\""}, 30s,
                   cli_options::with_env({{"RELOCK_TOKEN", "7"}}));
  EXPECT_EQ(token.code, 0);
}

TEST_F(cli, run_takes_every_word_after_the_name_as_the_command) {
  auto r = run({"run", "words", "sh", "-c", "echo \"$0 $1\"", "-x", "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "-x --wait\n");
}

TEST_F(cli, the_command_gets_none_of_relocks_redis_connections) {
  // cli_process starts relock with fds 0-2 only, so any socket the command has is relock's.
  auto r = run({"run", "fds", "--", "sh", "-c", "ls -l /proc/self/fd/ | grep -c socket:"});
  EXPECT_EQ(r.out, "0\n") << r.err;
}

TEST_F(cli, the_lock_is_held_while_the_command_runs_and_released_after) {
  const auto ready = file("ready");
  cli_process p(with_url({"run", "held", "--", "sh", "-c", "touch \"$0\"; sleep 1", ready}));
  ASSERT_TRUE(appears(ready));
  EXPECT_TRUE(exists("held"));
  EXPECT_EQ(p.wait(10s), 0);
  EXPECT_FALSE(exists("held"));
}

TEST_F(cli, conflict_code_wait_timing_and_nonblock) {
  relock::client holder(settings_for(server_));
  holder.lock("busy").lock(60s);
  auto started = steady::now();
  auto waited = run({"run", "-w", "0.5", "busy", "--", "true"});
  const auto took = steady::now() - started;
  EXPECT_EQ(waited.code, 1);
  EXPECT_EQ(lines(waited.err), 1u) << waited.err;
  EXPECT_GE(took, 500ms);  // never gives up early
  EXPECT_LT(took, 5s);

  started = steady::now();
  auto nonblock = run({"run", "-n", "-E", "75", "busy", "--", "true"});
  EXPECT_EQ(nonblock.code, 75);
  EXPECT_LT(steady::now() - started, 3s);
  EXPECT_EQ(lines(nonblock.err), 1u) << nonblock.err;
  EXPECT_NE(nonblock.err.find("'busy' is held"), std::string::npos) << nonblock.err;
}

TEST_F(cli, a_fixed_lease_is_never_renewed_and_stops_the_command_when_it_runs_out) {
  const auto ready = file("ready");
  const auto started = steady::now();
  cli_process p(with_url(
      {"run", "--lease", "1", "short", "--", "sh", "-c", "touch \"$0\"; exec sleep 20", ready}));
  ASSERT_TRUE(appears(ready));
  std::optional<int> code;
  while (!(code = p.wait(0ms))) {
    EXPECT_LE(pttl("short"), 1000);  // no watchdog: the TTL only goes down
    std::this_thread::sleep_for(20ms);
    ASSERT_LT(steady::now() - started, 10s);
  }
  EXPECT_EQ(code, 3);
  EXPECT_GE(steady::now() - started, 900ms);
  EXPECT_EQ(lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find("--lease ran out"), std::string::npos) << p.err();
}

TEST_F(cli, the_watchdog_keeps_the_lock_past_its_timeout_while_the_command_runs) {
  const auto ready = file("ready");
  cli_process p(with_url({"--watchdog-timeout", "1", "run", "kept", "--", "sh", "-c",
                          "touch \"$0\"; sleep 2.5", ready}));
  ASSERT_TRUE(appears(ready));
  // Sampled over two watchdog timeouts: the key never lapses.
  const auto until = steady::now() + 2s;
  while (steady::now() < until && !p.wait(0ms)) {
    EXPECT_GT(pttl("kept"), 0);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(p.wait(10s), 0);
  EXPECT_FALSE(exists("kept"));
}

TEST_F(cli, run_forwards_sigint_sigterm_and_sighup_to_the_command) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const auto ready = file("ready" + std::to_string(sig));
    // The traps prove the command got the signal; relock survives it and passes the status on.
    cli_process p(with_url({"run", "fwd", "--", "sh", "-c",
                            "trap 'exit 41' INT; trap 'exit 42' TERM; trap 'exit 43' HUP; "
                            "touch \"$0\"; while :; do sleep 0.05; done",
                            ready}));
    ASSERT_TRUE(appears(ready));
    p.signal(sig);
    EXPECT_EQ(p.wait(10s), sig == SIGINT ? 41 : sig == SIGTERM ? 42 : 43) << strsignal(sig);
    EXPECT_FALSE(exists("fwd"));
  }
}

TEST_F(cli, a_signal_while_waiting_ends_the_wait_and_runs_nothing) {
  relock::client holder(settings_for(server_));
  holder.lock("busy").lock(60s);
  const auto ran = file("ran");
  cli_process p(with_url({"run", "busy", "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("busy"); }, 10s));
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(5s), 128 + SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(ran));
}

TEST_F(cli, a_deleted_lock_stops_the_command_with_exit_3) {
  const auto ready = file("ready"), stopped = file("stopped");
  cli_process p(with_url({"--watchdog-timeout", "1", "run", "stolen", "--", "sh", "-c",
                          "trap 'touch \"$1\"; exit 0' TERM; touch \"$0\"; "
                          "while :; do sleep 0.05; done",
                          ready, stopped}));
  ASSERT_TRUE(appears(ready));
  raw_.command({"DEL", "stolen"});
  EXPECT_EQ(p.wait(10s), 3);  // though the command itself exited 0
  EXPECT_TRUE(std::filesystem::exists(stopped));
  EXPECT_EQ(lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find("lost the lock 'stolen' while the command ran"), std::string::npos);
}

TEST_F(cli, redis_away_for_longer_than_the_lease_stops_the_command_with_exit_3) {
  const auto ready = file("ready");
  cli_process p(with_url({"--watchdog-timeout", "1", "run", "away", "--", "sh", "-c",
                          "touch \"$0\"; exec sleep 30", ready}));
  ASSERT_TRUE(appears(ready));
  server_.pause();
  const auto code = p.wait(20s);
  server_.resume();
  EXPECT_EQ(code, 3);
  EXPECT_EQ(lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find("stopped answering"), std::string::npos) << p.err();
}

TEST_F(cli, a_waiting_run_rides_through_a_redis_restart) {
  // It exited 2 at once, although Redis was back within 2 s.
  raw_.command({"HSET", "restart", "elsewhere:1", "1"});
  raw_.command({"PEXPIRE", "restart", "60000"});
  const auto ran = file("ran");
  cli_process p(with_url({"run", "-w", "30", "restart", "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("restart"); }, 10s));
  server_.kill();  // no persistence: it comes back empty, the other holder's lock gone with it
  EXPECT_FALSE(p.wait(1500ms)) << "the waiter gave up while Redis was away: " << p.err();
  server_.start();
  EXPECT_EQ(p.wait(20s), 0) << p.err();
  EXPECT_TRUE(std::filesystem::exists(ran));
}

namespace {

nlohmann::json report_in(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return nlohmann::json::parse(line);
}

}  // namespace

// --report FILE: one JSON line saying how the run went, for cron logs and shell users.
TEST_F(cli, run_reports_how_long_it_waited_and_held_and_the_renewals) {
  const auto path = file("ran.json");
  // A 1 s watchdog lease (the least relock takes) renews every third of a second: a 1.5 s
  // command sees a few renewals.
  auto r = run({"--watchdog-timeout", "1", "run", "--report", path, "reported", "--", "sh", "-c",
                "sleep 1.5; exit 4"});
  EXPECT_EQ(r.code, 4) << r.err;
  const auto j = report_in(path);
  EXPECT_EQ(j["name"], "reported");
  EXPECT_EQ(j["outcome"], "ran");
  EXPECT_EQ(j["exit_status"], 4);
  EXPECT_EQ(j["command_status"], 4);
  EXPECT_GE(j["held_seconds"].get<double>(), 1.5);
  EXPECT_LT(j["waited_seconds"].get<double>(), 10.0);
  EXPECT_GE(j["renewals"].get<std::int64_t>(), 2);
  EXPECT_FALSE(j.contains("detail"));
}

TEST_F(cli, run_reports_a_busy_lock_an_error_and_with_json_on_stderr) {
  relock::client holder(settings_for(server_));
  holder.lock("held-elsewhere").lock(60s);
  const auto busy_path = file("busy.json");
  EXPECT_EQ(run({"run", "-n", "--report", busy_path, "held-elsewhere", "--", "true"}).code, 1);
  const auto busy = report_in(busy_path);
  EXPECT_EQ(busy["outcome"], "busy");
  EXPECT_EQ(busy["exit_status"], 1);
  EXPECT_TRUE(busy["held_seconds"].is_null());
  EXPECT_TRUE(busy["command_status"].is_null());

  // --json: the same line on stderr, after relock's own message; stdout stays the command's.
  auto json_run = run({"--json", "run", "-n", "held-elsewhere", "--", "true"});
  EXPECT_EQ(json_run.code, 1);
  EXPECT_EQ(json_run.out, "");
  const auto last_line = json_run.err.substr(json_run.err.rfind('\n', json_run.err.size() - 2) + 1);
  EXPECT_EQ(nlohmann::json::parse(last_line)["outcome"], "busy") << json_run.err;

  // No server: the message as always, and the report says error with it.
  const auto error_path = file("error.json");
  auto error = run_cli({"--url", "redis://127.0.0.1:1", "run", "-w", "1", "--report", error_path,
                        "x", "--", "true"});
  EXPECT_NE(error.code, 0);
  const auto e = report_in(error_path);
  EXPECT_EQ(e["outcome"], "error");
  EXPECT_EQ(e["exit_status"], error.code);
  EXPECT_FALSE(e["detail"].get<std::string>().empty());

  // A report that cannot be written is said, and the run's own status stands.
  auto unwritable = run({"run", "--report", "/nonexistent-dir/r.json", "free-one", "--", "true"});
  EXPECT_EQ(unwritable.code, 0);
  EXPECT_NE(unwritable.err.find("cannot write the report"), std::string::npos) << unwritable.err;
}
