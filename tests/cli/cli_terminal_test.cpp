// SPDX-License-Identifier: Apache-2.0
// Ctrl-C at a terminal: the kernel signals the whole foreground process group, relock and its
// command alike. The command must see it and relock must still release the lock.
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_fixture.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// relock as the session leader of a fresh pseudo-terminal, in its foreground process group.
class on_terminal {
 public:
  explicit on_terminal(std::vector<std::string> args) {
    args.insert(args.begin(), RELOCK_CLI_PATH);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ < 0) throw std::runtime_error("forkpty failed");
    if (pid_ == 0) {
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~on_terminal() {
    if (!code_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(master_);
  }
  void type(const std::string& keys) { (void)!write(master_, keys.data(), keys.size()); }
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    wait_until(
        [&] {
          int status = 0;
          if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
          code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
          return true;
        },
        timeout);
    return code_;
  }

 private:
  int master_ = -1;
  pid_t pid_ = 0;
  std::optional<int> code_;
};

}  // namespace

TEST_F(cli, ctrl_c_at_a_terminal_reaches_the_command_and_the_lock_is_released) {
  const auto ready = file("ready");
  on_terminal t(
      with_url({"run", "tty", "--", "sh", "-c",
                "trap 'exit 41' INT; touch \"$0\"; while :; do sleep 0.05; done", ready}));
  ASSERT_TRUE(appears(ready));
  ASSERT_TRUE(exists("tty"));
  t.type("\x03");  // VINTR: the terminal sends SIGINT to its foreground process group
  EXPECT_EQ(t.wait(10s), 41);
  EXPECT_FALSE(exists("tty"));
}
