// SPDX-License-Identifier: Apache-2.0
// `relock run` never leaves its command running without the lock: not when relock itself is
// killed, not when the hold is taken away while the command runs.
#include <signal.h>

#include <fstream>
#include <optional>

#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// Running, and not a zombie: once relock is gone the command is reaped by whoever adopts it
// (init, a subreaper), perhaps never inside a container; a zombie runs nothing.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto state_at = line.rfind(')') + 2;  // "pid (comm) S ...": comm may hold spaces
  return state_at < line.size() && line[state_at] != 'Z' && line[state_at] != 'X';
}

// The pid a command wrote, once the whole line is there.
std::optional<pid_t> written_pid(const std::string& file) {
  std::optional<pid_t> pid;
  wait_until(
      [&] {
        std::ifstream in(file);
        std::string line;
        if (!std::getline(in, line) || in.eof()) return false;  // no newline yet
        pid = static_cast<pid_t>(std::stol(line));
        return true;
      },
      10s);
  return pid;
}

}  // namespace

TEST_F(cli, the_command_dies_with_relock_even_by_sigkill) {
  const auto pid_file = file("pid");
  cli_process p(
      with_url({"run", "orphan", "--", "sh", "-c", "echo $$ > \"$0\"; exec sleep 60", pid_file}));
  const auto command = written_pid(pid_file);
  ASSERT_TRUE(command);
  ASSERT_TRUE(running(*command));
  p.signal(SIGKILL);
  EXPECT_EQ(p.wait(10s), 128 + SIGKILL);
  EXPECT_TRUE(wait_until([&] { return !running(*command); }, 5s));
  if (running(*command)) kill(*command, SIGKILL);  // the test's own cleanup, by PID
}

TEST_F(cli, a_forced_unlock_stops_the_command_at_once_not_at_the_next_renewal) {
  const auto ready = file("ready"), stopped = file("stopped");
  // The default watchdog: the next renewal would come 10 s after the acquire.
  cli_process p(with_url({"run", "taken", "--", "sh", "-c",
                          "trap 'touch \"$1\"; exit 0' TERM; touch \"$0\"; "
                          "while :; do sleep 0.05; done",
                          ready, stopped}));
  ASSERT_TRUE(appears(ready));
  const auto forced = steady::now();
  auto unlock = run({"unlock", "--force", "taken"});
  EXPECT_EQ(unlock.code, 0) << unlock.err;
  EXPECT_EQ(p.wait(10s), 3);
  EXPECT_LT(steady::now() - forced, 3s);
  EXPECT_TRUE(std::filesystem::exists(stopped));  // it got SIGTERM
  EXPECT_EQ(lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find("lost the lock 'taken' while the command ran"), std::string::npos)
      << p.err();
}

TEST_F(cli, a_force_unlock_by_another_client_stops_the_command_too) {
  const auto ready = file("ready");
  cli_process p(with_url({"run", "taken", "--", "sh", "-c", "touch \"$0\"; exec sleep 60", ready}));
  ASSERT_TRUE(appears(ready));
  relock::client admin(settings_for(server_));
  const auto forced = steady::now();
  EXPECT_TRUE(admin.lock("taken").force_unlock());
  EXPECT_EQ(p.wait(10s), 3);
  EXPECT_LT(steady::now() - forced, 3s);
}
