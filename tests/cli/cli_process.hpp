// The relock binary as a child process: output captured to files, waited on with deadlines.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relock::test {

class cli_process {
 public:
  // Starts `relock ARGS...` with extra environment variables.
  explicit cli_process(std::vector<std::string> args, std::map<std::string, std::string> env = {});
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

// Runs to the end (throws after `timeout`).
cli_result run_cli(std::vector<std::string> args, std::chrono::milliseconds timeout = std::chrono::seconds(30),
                   std::map<std::string, std::string> env = {});

}  // namespace relock::test
