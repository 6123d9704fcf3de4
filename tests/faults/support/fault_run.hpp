// SPDX-License-Identifier: Apache-2.0
// One run of the fault suite: its directory of histories, the register server, the worker
// processes, and the checker's verdict at the end (HISTORY.md).
//
//   fault_run run("single");
//   run.start_workers(4, url, names, run.seconds_from_now(60));
//   ... the nemesis: run.fault_start("client_kill", "server"); ...
//   run.wait_workers();
//   auto verdict = run.check();   // runs checker/relock_checker.py on the directory
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/history.hpp"
#include "support/redis_server.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace relock::test {

struct worker_settings {
  std::string url;                 // the lock deployment, as the workers reach it
  std::vector<std::string> names;  // the lock names they contend on
  std::int64_t until_ns = 0;       // when they stop (monotonic_ns)
  int threads = 4;
  int fenced_percent = 80;
  int watchdog_lease_ms = 1500;
  int command_timeout_ms = 500;
  int wait_max_ms = 400;
  std::vector<std::string> extra;  // more key=value arguments
};

struct verdict {
  int exit_code = -1;  // the checker's: 0 no violation, 1 violations, 2 bad input
  std::string output;  // its report
  std::string json;    // its --json result
};

class fault_run {
 public:
  explicit fault_run(const std::string& label);
  ~fault_run();  // kills every worker still running (by PID)

  const std::filesystem::path& dir() const { return dir_.path(); }
  redis_server& resource() { return resource_; }
  history& nemesis() { return nemesis_; }

  // Starts a worker w<N> (N counting from 1 over the run) and returns its index.
  std::size_t start_worker(const worker_settings& s);
  std::size_t workers() const { return workers_.size(); }
  const std::string& worker_name(std::size_t i) const { return workers_[i]->name; }
  bool worker_running(std::size_t i) { return workers_[i]->process.running(); }
  void kill_worker(std::size_t i);  // SIGKILL, logged as a `kill` fault
  void pause_worker(std::size_t i);
  void resume_worker(std::size_t i);
  // Asks every worker to stop after its current hold (the stop_file=DIR/stop they were given).
  void stop_workers();
  // Waits for every worker to end (they stop at until_ns), killing any still running after
  // `grace`; returns how many had to be killed.
  int wait_workers(std::chrono::milliseconds grace);

  // Logs a fault's start or end (HISTORY.md's nemesis events).
  void fault(std::string_view phase, std::string_view kind, std::string_view target,
             const std::vector<std::string>& names = {});

  // Writes register.json from the resource server for `names`, then runs the checker.
  verdict check(const std::vector<std::string>& names, int wake_bound_ms);

 private:
  struct worker {
    std::string name;
    server_process process;
  };

  temp_dir dir_;
  redis_server resource_;
  history nemesis_;
  std::vector<std::unique_ptr<worker>> workers_;
};

// Monotonic ns `d` from now.
std::int64_t ns_from_now(std::chrono::milliseconds d);

}  // namespace relock::test
