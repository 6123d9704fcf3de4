// SPDX-License-Identifier: Apache-2.0
#include "child_supervisor.hpp"

#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "cli.hpp"
#include "process/reap.hpp"
#include "process/spawn.hpp"

namespace relock_cli {
namespace {

sigset_t forwarded_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  return set;
}

std::vector<int> open_fds() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.' && std::atoi(e->d_name) != dirfd(dir)) {
      fds.push_back(std::atoi(e->d_name));
    }
  }
  closedir(dir);
  return fds;
}

}  // namespace

child_supervisor::child_supervisor(std::stop_source cancel_wait)
    : cancel_wait_(std::move(cancel_wait)), inherited_fds_(open_fds()) {
  const sigset_t set = forwarded_signals();
  pthread_sigmask(SIG_BLOCK, &set, &started_mask_);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (signal_fd_ < 0 || wake_fd_ < 0) {
    throw failure(exit_usage, std::string("signalfd: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { loop(); });
}

child_supervisor::~child_supervisor() {
  {
    std::lock_guard g(mutex_);
    quit_ = true;
  }
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  thread_.join();
  close(signal_fd_);
  close(wake_fd_);
  // The signals stay blocked: one still pending would otherwise kill relock before it exits
  // with the code it decided on.
}

void child_supervisor::waiting() {
  std::lock_guard g(mutex_);
  phase_ = phase::waiting;
}

bool child_supervisor::start(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env,
                             std::optional<time_point> lease_end) {
  // If relock dies, even by SIGKILL, the command dies too (spawn's parent-death signal): the
  // hold is no longer renewed, so it must not go on without the lock. SIGKILL because a command
  // may catch or ignore SIGTERM and run on unprotected once the lease has run out. (The signal
  // comes when the thread that forked ends: relock's main thread, which waits for the command.)
  // Asio opens relock's sockets without close-on-exec; the command must not inherit our Redis
  // connections (a daemon it starts would keep them open), only what relock itself inherited.
  const relock::process::spawn_options options{
      .env = env, .signal_mask = started_mask_, .keep_fds = inherited_fds_, .search_path = true};

  // Held across the spawn, so a signal comes either before (and nothing starts) or after (and
  // is forwarded): none falls between.
  std::lock_guard g(mutex_);
  if (interrupted_by_ != 0 || lost_why_) return false;
  const std::string cannot_run = "cannot run '" + argv.front() + "': ";
  try {
    child_ = relock::process::spawn(argv, options);
  } catch (const relock::process::exec_error& e) {
    throw failure(e.code().value() == ENOENT ? exit_not_found : exit_cannot_run,
                  cannot_run + std::strerror(e.code().value()));
  } catch (const std::system_error& e) {
    throw failure(exit_cannot_run, cannot_run + e.what());
  }
  phase_ = phase::running;
  lease_end_ = lease_end;
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);  // the thread's poll timeout now has a lease end
  return true;
}

int child_supervisor::wait() {
  // Wait without reaping first: until the phase changes under the lock, the thread may still
  // signal this pid, which must not have been reused by then.
  siginfo_t info{};
  while (waitid(P_PID, child_, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  int status = 0;
  {
    std::lock_guard g(mutex_);
    phase_ = phase::ended;
    status = relock::process::reap(child_).value_or(0);
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : exit_usage;
}

void child_supervisor::lost(const std::string& why) {
  std::lock_guard g(mutex_);
  if (lost_why_) return;
  lost_why_ = why;
  if (phase_ == phase::running) stop_command_locked();
}

std::optional<std::string> child_supervisor::lost_reason() {
  std::lock_guard g(mutex_);
  return lost_why_;
}

bool child_supervisor::stopped_command() {
  std::lock_guard g(mutex_);
  return stopped_command_;
}

void child_supervisor::stop_command_locked() {
  stopped_command_ = true;
  kill(child_, SIGTERM);
}

int child_supervisor::interrupted_by() {
  std::lock_guard g(mutex_);
  return interrupted_by_;
}

void child_supervisor::on_signal(int sig, int code) {
  std::lock_guard g(mutex_);
  switch (phase_) {
    case phase::connecting:
      _exit(128 + sig);  // nothing is held yet, so nothing to release
    case phase::waiting:
      if (interrupted_by_ == 0) interrupted_by_ = sig;
      cancel_wait_.request_stop();
      break;
    case phase::running:
      // Ctrl-C at a terminal: the kernel sent SIGINT to the whole foreground process group,
      // the command included. A second copy from us would look like a second Ctrl-C, which
      // many programs take as "quit now, skip the cleanup".
      if (sig == SIGINT && code == SI_KERNEL && getpgid(child_) == getpgrp()) break;
      kill(child_, sig);
      break;
    case phase::ended:
      break;  // releasing, then exiting with the command's status
  }
}

void child_supervisor::loop() {
  for (;;) {
    int timeout_ms = -1;
    {
      std::lock_guard g(mutex_);
      if (quit_) return;
      if (phase_ == phase::running && lease_end_) {
        const auto left = *lease_end_ - std::chrono::steady_clock::now();
        if (left <= left.zero()) {
          lease_end_.reset();
          if (!lost_why_) lost_why_ = "its --lease ran out";
          stop_command_locked();
          continue;
        }
        // Rounded up: waking a millisecond late is fine, early would only loop.
        timeout_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
      }
    }
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, timeout_ms) < 0) continue;  // EINTR
    if (fds[1].revents & POLLIN) {
      std::uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof count);
    }
    signalfd_siginfo info{};
    if ((fds[0].revents & POLLIN) && read(signal_fd_, &info, sizeof info) == sizeof info) {
      on_signal(static_cast<int>(info.ssi_signo), info.ssi_code);
    }
  }
}

}  // namespace relock_cli
