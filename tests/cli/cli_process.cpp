// SPDX-License-Identifier: Apache-2.0
#include "cli_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace relock::test {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

cli_process::cli_process(std::vector<std::string> args, cli_options options) {
  char pattern[] = "/tmp/relock-cli-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  args.insert(args.begin(), RELOCK_CLI_PATH);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (!options.env.contains(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
  std::ofstream(dir_ / "in") << options.stdin_text;
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  const int output = O_WRONLY | O_CREAT | O_TRUNC;
  posix_spawn_file_actions_addopen(&files, 0, (dir_ / "in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, (dir_ / "out").c_str(), output, 0644);
  posix_spawn_file_actions_addopen(&files, 2, (dir_ / "err").c_str(), output, 0644);
  posix_spawn_file_actions_addclosefrom_np(&files, 3);  // the test's own connections stay here
  int rc = posix_spawn(&pid_, argv[0], &files, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) throw std::runtime_error(std::string("cannot start relock: ") + std::strerror(rc));
}

cli_process::~cli_process() {
  if (!code_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::optional<int> cli_process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!code_) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return code_;
}

void cli_process::signal(int sig) {
  if (!code_) kill(pid_, sig);
}

std::string cli_process::out() const { return slurp(dir_ / "out"); }
std::string cli_process::err() const { return slurp(dir_ / "err"); }

cli_result run_cli(std::vector<std::string> args, std::chrono::milliseconds timeout,
                   cli_options options) {
  cli_process p(std::move(args), std::move(options));
  auto code = p.wait(timeout);
  if (!code) throw std::runtime_error("relock did not finish in time; stderr: " + p.err());
  return {*code, p.out(), p.err()};
}

}  // namespace relock::test
