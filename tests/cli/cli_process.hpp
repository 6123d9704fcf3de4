// SPDX-License-Identifier: Apache-2.0
// The relock binary as a child process: stdin from a string, stdout and stderr captured to
// files, waited on with deadlines, stopped and reaped by PID when the object goes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relock::test {

struct cli_options {
  // Added to (or replacing) the test's environment.
  std::map<std::string, std::string> env;
  std::string stdin_text;

  // Named starts (GCC 12 warns about designated initializers that leave members out).
  static cli_options with_env(std::map<std::string, std::string> env) {
    cli_options o;
    o.env = std::move(env);
    return o;
  }
  static cli_options with_stdin(std::string text) {
    cli_options o;
    o.stdin_text = std::move(text);
    return o;
  }
};

class cli_process {
 public:
  // Starts `relock ARGS...`. It gets stdin, stdout and stderr only: no descriptor of the test
  // (its Redis connections, say) leaks into it, so what it passes on is its own.
  explicit cli_process(std::vector<std::string> args, cli_options options = {});
  ~cli_process();  // SIGKILLs and reaps a process still running
  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;

  // The exit code (128+N when killed by signal N), or nullopt if still running at the deadline.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void signal(int sig);
  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = 0;
  std::optional<int> code_;
  std::filesystem::path dir_;
};

struct cli_result {
  int code;
  std::string out, err;
};

// Runs to the end; throws after `timeout`.
cli_result run_cli(std::vector<std::string> args,
                   std::chrono::milliseconds timeout = std::chrono::seconds(30),
                   cli_options options = {});

}  // namespace relock::test
