// SPDX-License-Identifier: Apache-2.0
#include "process/child.hpp"

#include "process/reap.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <stdexcept>
#include <thread>
#include <utility>

namespace relock::process {
namespace {

// waitpid for the state changes pause() and resume() wait for, retried on EINTR.
pid_t wait_change(pid_t pid, int& status, int options) {
  pid_t r;
  do {
    r = ::waitpid(pid, &status, options);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

child::~child() { kill(); }

child::child(child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      alive_(std::exchange(other.alive_, false)),
      paused_(std::exchange(other.paused_, false)),
      wait_status_(other.wait_status_) {}

child& child::operator=(child&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    alive_ = std::exchange(other.alive_, false);
    paused_ = std::exchange(other.paused_, false);
    wait_status_ = other.wait_status_;
  }
  return *this;
}

void child::spawn(const std::vector<std::string>& argv, const spawn_options& options) {
  if (running()) throw std::logic_error("process: pid " + std::to_string(pid_) + " still runs");
  pid_ = process::spawn(argv, options);
  alive_ = true;
  paused_ = false;
  wait_status_ = 0;
}

child::readiness child::wait_ready(const std::function<bool()>& ready,
                                   std::chrono::milliseconds timeout,
                                   std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!running()) return readiness::exited;
    if (ready()) return readiness::ready;
    if (std::chrono::steady_clock::now() >= deadline) return readiness::timed_out;
    std::this_thread::sleep_for(poll);
  }
}

void child::reaped(int status) {
  alive_ = false;
  paused_ = false;
  wait_status_ = status;
}

bool child::running() {
  if (!alive_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped(status);
  } else if (r < 0 && errno == ECHILD) {
    reaped(0);  // reaped elsewhere (SIGCHLD set to SIG_IGN): it is gone either way
  }
  return alive_;
}

void child::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  if (paused_) resume();  // a stopped process only acts on SIGTERM once continued
  process::stop(pid_, grace, [this] { return !running(); });
  kill();  // reaps one that survived even SIGKILL's grace (stuck in the kernel), if it ends
}

void child::kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);  // works on a stopped process too
  reaped(reap(pid_).value_or(0));
}

void child::pause() {
  if (paused_ || !running()) return;
  ::kill(pid_, SIGSTOP);
  // SIGSTOP takes effect asynchronously; WUNTRACED returns once the child has really stopped,
  // so the caller's next request cannot slip in before the pause.
  int status = 0;
  const pid_t r = wait_change(pid_, status, WUNTRACED);
  if (r == pid_ && WIFSTOPPED(status)) {
    paused_ = true;
  } else if (r == pid_) {
    reaped(status);
  }
}

void child::resume() {
  if (!paused_ || !running()) return;
  ::kill(pid_, SIGCONT);
  int status = 0;
  const pid_t r = wait_change(pid_, status, WCONTINUED);
  if (r == pid_ && !WIFCONTINUED(status)) reaped(status);
  paused_ = false;
}

std::string child::describe_exit() const { return alive_ ? "running" : describe(wait_status_); }

bool child::exited_successfully() const {
  return pid_ > 0 && !alive_ && WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0;
}

}  // namespace relock::process
