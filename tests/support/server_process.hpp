// SPDX-License-Identifier: Apache-2.0
// One server process owned by a test: a relock::process::child (src/process: fork+exec, stopped
// by its PID, never by name) with its output file, and the judgement of a server's start.
// Knows nothing about Redis but its "Address already in use", so redis-server, redis-sentinel
// and cluster nodes share it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "process/child.hpp"

namespace relock::test {

// Thread-safety: none; one test thread drives a process at a time.
// Lifetime: the destructor SIGKILLs a child that is still running and reaps it. The child also
// gets SIGKILL when the thread that spawned it exits (PR_SET_PDEATHSIG is tied to the forking
// thread, not the process), so a test process that crashes or aborts leaves no server behind;
// the flip side is that a server spawned from a short-lived std::thread dies with that thread.
class server_process {
 public:
  using readiness = process::child::readiness;  // ready, exited, timed_out

  server_process() = default;
  ~server_process();  // process::child's: SIGKILL and reap
  server_process(server_process&& other) noexcept;
  server_process& operator=(server_process&&) = delete;
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  // Runs argv[0] (a path, not searched on PATH) with `argv`. stdin reads /dev/null; stdout and
  // stderr are appended to `output`, so errors printed before the program opens its own log
  // (a bad config line, say) are kept. Throws std::system_error when fork or exec fails and
  // std::logic_error when the previous child is still running.
  void spawn(std::vector<std::string> argv, std::filesystem::path output);

  // Polls `answers` every `poll` until it returns true (ready), the child exits (exited), or
  // `timeout` passes (timed_out; the child is left running for the caller to inspect).
  readiness wait_ready(const std::function<bool()>& answers, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
    return child_.wait_ready(answers, timeout, poll);
  }

  // A server's start, judged: ready once `answers`; port_in_use when it exited saying
  // "Address already in use" (the caller picks another port); otherwise it is killed and
  // std::runtime_error says `who` ended how, with the end of its output.
  enum class start { ready, port_in_use };
  start wait_started(const std::function<bool()>& answers, std::chrono::milliseconds timeout,
                     const std::string& who);

  // True while the child lives (stopped by pause() counts as living). Reaps it if it exited.
  bool running() { return child_.running(); }
  // SIGTERM, then SIGKILL if it has not exited after `grace`; resumes a paused child first so
  // it can act on SIGTERM. Returns at once when nothing runs.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5)) { child_.stop(grace); }
  // SIGKILL and reap. Returns at once when nothing runs.
  void kill() { child_.kill(); }
  // SIGSTOP / SIGCONT; each returns once the kernel reports the child stopped / continued.
  void pause() { child_.pause(); }
  void resume() { child_.resume(); }
  bool paused() const { return child_.paused(); }

  // The last child's PID, kept after it exited (tests check that it is gone); -1 before spawn.
  pid_t pid() const { return child_.pid(); }
  // "exited with status 1", "killed by signal 9", or "running".
  std::string describe_exit() const { return child_.describe_exit(); }
  // True once the child was reaped after exiting with status 0 (a tool such as redis-cli that
  // ran to completion), false while it runs or after any other end.
  bool exited_successfully() const { return child_.exited_successfully(); }
  const std::filesystem::path& output() const { return output_; }
  // The last `lines` lines of the output file.
  std::string output_tail(std::size_t lines = 40) const;
  // Everything written to the output file since the last spawn().
  std::string output_since_spawn() const;

 private:
  process::child child_;
  std::filesystem::path output_;
  std::uintmax_t output_offset_ = 0;
};

// The absolute path of `program` found on $PATH (process::find_on_path), else `fallback` if it
// is executable; throws std::runtime_error naming the program when neither exists.
std::filesystem::path find_program(const std::string& program,
                                   const std::filesystem::path& fallback);

}  // namespace relock::test
