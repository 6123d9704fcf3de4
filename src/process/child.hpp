// SPDX-License-Identifier: Apache-2.0
// One child process owned by one object: started with spawn(), watched until it is ready,
// stopped by its PID (never by name) and always reaped. Knows nothing about Redis, so a
// redis-server, a Sentinel, redis-cli or a test's worker share it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "process/spawn.hpp"

namespace relock::process {

// Thread-safety: none; one thread drives a child at a time.
// Lifetime: the destructor SIGKILLs a child that still runs and reaps it. The child also gets
// SIGKILL when the thread that spawned it exits (see spawn.hpp), so a parent that crashes
// leaves nothing behind; the flip side is that a child spawned from a short-lived std::thread
// dies with that thread.
class child {
 public:
  enum class readiness { ready, exited, timed_out };

  child() = default;
  ~child();
  child(child&& other) noexcept;
  // Kills and reaps the child held, then takes `other`'s.
  child& operator=(child&& other) noexcept;
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  // process::spawn(argv, options), owned by this object from then on. Throws what spawn
  // throws, and std::logic_error when the previous child still runs.
  void spawn(const std::vector<std::string>& argv, const spawn_options& options = {});

  // Polls `ready` every `poll` until it returns true (ready), the child exits (exited), or
  // `timeout` passes (timed_out; the child is left running for the caller to inspect).
  readiness wait_ready(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10));

  // True while the child lives (stopped by pause() counts as living). Reaps it if it exited.
  bool running();
  // SIGTERM, then SIGKILL if it has not exited after `grace`; resumes a paused child first so
  // it can act on SIGTERM. Returns once it is reaped, at once when nothing runs.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // SIGKILL and reap. Returns at once when nothing runs.
  void kill();
  // SIGSTOP / SIGCONT; each returns once the kernel reports the child stopped / continued.
  void pause();
  void resume();
  bool paused() const { return paused_; }

  // The last child's PID, kept after it exited (tests check that it is gone); -1 before spawn.
  pid_t pid() const { return pid_; }
  // "exited with status 1", "killed by signal 9", or "running".
  std::string describe_exit() const;
  // True once the child was reaped after exiting with status 0 (a tool such as redis-cli that
  // ran to completion), false while it runs or after any other end.
  bool exited_successfully() const;

 private:
  void reaped(int status);

  pid_t pid_ = -1;
  bool alive_ = false;
  bool paused_ = false;
  int wait_status_ = 0;
};

}  // namespace relock::process
