// SPDX-License-Identifier: Apache-2.0
// `relock top` as a person uses it: in a terminal (tmux, on a private socket), while threads of
// the test take and release locks; the screen shows the rows, `s` changes the order in the
// header, `r` refreshes at once, a smaller window gets fewer rows, `q` ends it; Ctrl-C ends it too
// and leaves the terminal as it found it (cooked mode, echo, the main screen, a cursor). Skipped
// without tmux.
#include <unistd.h>

#include <sys/wait.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <relock/client.hpp>
#include <thread>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "";
  for (std::size_t from = 0, colon = 0; colon != std::string::npos; from = colon + 1) {
    colon = dirs.find(':', from);
    const auto candidate = std::filesystem::path(dirs.substr(from, colon - from)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A tmux server of its own (its socket in `dir`, no user configuration, /bin/sh as the shell),
// killed by the destructor whatever the test did.
class tmux {
 public:
  explicit tmux(const std::filesystem::path& dir)
      : socket_((dir / "sock").string()), config_((dir / "tmux.conf").string()) {
    std::ofstream(config_) << "set -g default-shell /bin/sh\n";
  }
  ~tmux() { (void)run({"kill-server"}); }
  tmux(const tmux&) = delete;
  tmux& operator=(const tmux&) = delete;

  // Runs `tmux -S sock ARGS...`: its output, and whether it exited 0.
  std::pair<std::string, bool> run(const std::vector<std::string>& args) const {
    // Not the tmux the test may run in: its $TMUX would make this one refuse to nest.
    std::string command = "env -u TMUX tmux -f " + quoted(config_) + " -S " + quoted(socket_);
    for (const auto& a : args) command += " " + quoted(a);
    command += " 2>/dev/null";
    FILE* out = ::popen(command.c_str(), "r");
    if (out == nullptr) return {"", false};
    std::string text;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;)
      text.append(buffer, n);
    const int status = ::pclose(out);
    return {text, WIFEXITED(status) && WEXITSTATUS(status) == 0};
  }
  void start(const std::string& shell_command, int width, int height) const {
    ASSERT_TRUE(run({"new-session", "-d", "-x", std::to_string(width), "-y", std::to_string(height),
                     shell_command})
                    .second);
  }
  std::string screen() const { return run({"capture-pane", "-p"}).first; }
  bool shows(const std::string& text) const { return screen().find(text) != std::string::npos; }
  void keys(const std::string& keys) const { (void)run({"send-keys", keys}); }
  bool running() const { return run({"has-session"}).second; }
  // "1 0" while the alternate screen is on and the cursor hidden.
  std::string screen_state() const {
    return run({"display-message", "-p", "#{alternate_on} #{cursor_flag}"}).first;
  }

 private:
  std::string socket_, config_;
};

// Threads of the test taking and releasing locks, as `relock demo`'s workers do, beside locks
// held for the whole test.
class lock_load {
 public:
  explicit lock_load(const redis_server& server) : client_(settings_for(server)) {
    for (int i = 0; i < 6; ++i) {
      steady_.push_back(client_.lock("tmux:steady:" + std::to_string(i)));
      steady_.back().lock();
    }
    for (int i = 0; i < 3; ++i) {
      workers_.emplace_back([this, i](std::stop_token stop) {
        auto m = client_.lock("tmux:busy:" + std::to_string(i % 2));
        while (!stop.stop_requested()) {
          if (!m.try_lock(1s)) continue;
          std::this_thread::sleep_for(20ms);
          m.unlock();
        }
      });
    }
  }
  ~lock_load() {
    for (auto& w : workers_) w.request_stop();
    workers_.clear();  // joined before the locks and the client go
  }

 private:
  relock::client client_;
  std::vector<relock::mutex> steady_;
  std::vector<std::jthread> workers_;
};

class cli_top_tmux : public cli {
 protected:
  void SetUp() override {
    if (!on_path("tmux")) GTEST_SKIP() << "tmux is not installed";
  }
  std::string top_command(const std::string& flags = "") const {
    return quoted(RELOCK_CLI_PATH) + " --url " + quoted(server_.url()) + " top " + flags;
  }
};

}  // namespace

TEST_F(cli_top_tmux, shows_the_rows_changes_the_order_with_s_refreshes_with_r_and_quits_with_q) {
  lock_load load(server_);
  tmux t(scratch_.path());
  // A refresh a minute: what changes on the screen below comes from the keys.
  t.start(top_command("--interval 60"), 160, 40);
  const auto pid = "pid " + std::to_string(::getpid());
  ASSERT_TRUE(wait_until([&] { return t.shows("tmux:steady:5") && t.shows(pid); }, 15s, 50ms))
      << t.screen();
  EXPECT_TRUE(t.shows("sort name")) << t.screen();
  EXPECT_EQ(t.screen_state(), "1 0\n") << "the alternate screen, no cursor";

  t.keys("s");
  EXPECT_TRUE(wait_until([&] { return t.shows("sort kind"); }, 10s, 50ms)) << t.screen();
  t.keys("s");
  EXPECT_TRUE(wait_until([&] { return t.shows("sort holders"); }, 10s, 50ms)) << t.screen();

  relock::client late_client(settings_for(server_));
  auto late = late_client.lock("tmux:late");
  late.lock();
  t.keys("r");
  EXPECT_TRUE(wait_until([&] { return t.shows("tmux:late"); }, 10s, 50ms)) << t.screen();

  // A smaller window: the header, a blank line and the titles leave 3 rows of 6 rows.
  (void)t.run({"resize-window", "-x", "100", "-y", "6"});
  EXPECT_TRUE(wait_until([&] { return t.shows("objects 3 of "); }, 10s, 50ms)) << t.screen();

  t.keys("q");
  EXPECT_TRUE(wait_until([&] { return !t.running(); }, 10s, 50ms)) << t.screen();
}

TEST_F(cli_top_tmux, ctrl_c_ends_it_and_gives_the_terminal_back) {
  lock_load load(server_);
  tmux t(scratch_.path());
  // The shell stays to show how relock ended and how it left the terminal. Its trap keeps it
  // from dying of the Ctrl-C itself; relock gets the default disposition, as at a prompt.
  t.start("trap true INT; " + top_command() + "; echo EXIT=$?; stty -a; exec sleep 60", 160, 40);
  ASSERT_TRUE(wait_until([&] { return t.shows("tmux:steady:0"); }, 15s, 50ms)) << t.screen();
  t.keys("C-c");
  ASSERT_TRUE(wait_until([&] { return t.shows("EXIT=130"); }, 10s, 50ms)) << t.screen();
  const auto after = t.screen();
  EXPECT_NE(after.find(" icanon"), std::string::npos) << after;
  EXPECT_EQ(after.find("-icanon"), std::string::npos) << after;
  EXPECT_NE(after.find(" echo "), std::string::npos) << after;
  EXPECT_EQ(after.find(" -echo "), std::string::npos) << after;
  EXPECT_EQ(after.find("tmux:steady"), std::string::npos) << "the main screen again: " << after;
  EXPECT_EQ(t.screen_state(), "0 1\n") << "the main screen, a cursor";
}
