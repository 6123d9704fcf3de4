// SPDX-License-Identifier: Apache-2.0
// What `relock run` does around its command: owns SIGINT, SIGTERM and SIGHUP for the whole
// process, starts the command, forwards those signals to it, and stops it (SIGTERM) when the
// lock is lost or a fixed lease runs out. If relock itself dies (even by SIGKILL), the command
// gets SIGKILL: it never runs on without the lock.
//
// Construct it first, before the relock::client: it blocks the three signals in the calling
// thread, so every thread started afterwards (relock's I/O thread included) inherits the mask
// and only the supervisor's own thread takes them, from a signalfd. What a signal does depends
// on the phase: while connecting, relock exits at once (nothing is held yet); while waiting for
// the lock, it cancels the wait; while the command runs, it is forwarded.
// Thread-safety: lost() may be called from any thread (relock's I/O thread calls it); the rest
// from the thread that made the supervisor.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace relock_cli {

class child_supervisor {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  explicit child_supervisor(std::stop_source cancel_wait);
  ~child_supervisor();
  child_supervisor(const child_supervisor&) = delete;
  child_supervisor& operator=(const child_supervisor&) = delete;

  // From here on a signal cancels the wait (through the stop source) instead of exiting.
  void waiting();
  // Starts `argv` with `env` and the signal mask relock started with. false, and nothing
  // started, when a signal came or the lock was lost since waiting(). `lease_end`: when the
  // hold expires in Redis; the command is stopped then. Throws failure (126/127).
  bool start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             std::optional<time_point> lease_end);
  // Waits for the command and returns its exit status, 128+N if signal N killed it.
  int wait();

  // The hold is gone: stop the command (now, or as soon as it starts) and remember why.
  void lost(const std::string& why);
  std::optional<std::string> lost_reason();
  // Whether the command got SIGTERM because of it.
  bool stopped_command();
  // The signal that ended the wait or came before the command started; 0 if none.
  int interrupted_by();

 private:
  enum class phase { connecting, waiting, running, ended };
  void loop();
  void on_signal(int sig, int code);
  void stop_command_locked();

  std::stop_source cancel_wait_;
  sigset_t started_mask_{};         // the mask relock was started with, restored for the command
  std::vector<int> inherited_fds_;  // open when relock started: the command inherits these only
  int signal_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: tells the thread to quit

  std::mutex mutex_;  // guards everything below; the thread holds it while it acts
  bool quit_ = false;
  phase phase_ = phase::connecting;
  pid_t child_ = 0;
  std::optional<time_point> lease_end_;
  int interrupted_by_ = 0;
  std::optional<std::string> lost_why_;
  bool stopped_command_ = false;

  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace relock_cli
