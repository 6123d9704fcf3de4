// relock run: acquire, run the command as a child, forward signals, release, pass its status on.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include <asio/use_future.hpp>

#include "cli.hpp"

extern char** environ;

namespace relock_cli {
namespace {

using steady = std::chrono::steady_clock;

sigset_t forwarded_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  return set;
}

// Forwards signals to the child while it runs; before that, a signal cancels the wait. Also
// stops the child when a fixed lease runs out. A thread with sigtimedwait rather than a
// handler: it may call into the library (stop_source) and read the clock freely.
class signal_watcher {
 public:
  signal_watcher(std::stop_source stop, std::optional<std::chrono::milliseconds> lease)
      : stop_(std::move(stop)), lease_(lease), thread_([this] { loop(); }) {}
  ~signal_watcher() {
    done_ = true;
    thread_.join();
  }

  // A signal that came after the lock was taken but before the child existed: the caller
  // releases and leaves instead of starting the command.
  int take_pending() {
    std::lock_guard g(mutex_);
    acquired_ = true;
    return std::exchange(pending_, 0);
  }
  void child_started(pid_t pid) {
    std::lock_guard g(mutex_);
    if (lease_) lease_ends_ = steady::now() + *lease_;
    child_ = pid;
    if (int sig = std::exchange(pending_, 0)) kill(pid, sig);  // came while spawning
  }
  void child_ended() {
    std::lock_guard g(mutex_);
    child_ = 0;
  }
  void lost(const std::string& why) {
    std::lock_guard g(mutex_);
    if (lost_) return;
    lost_ = true;
    lost_why_ = why;
    if (child_ != 0) kill(child_, SIGTERM);
  }
  std::optional<std::string> lost_reason() {
    std::lock_guard g(mutex_);
    return lost_ ? std::optional(lost_why_) : std::nullopt;
  }
  int cancelled_by() const { return cancelled_by_; }

 private:
  void loop() {
    const sigset_t set = forwarded_signals();
    while (!done_) {
      timespec tick{0, 20'000'000};
      int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig > 0) forward(sig);
      if (lease_expired()) lost("its --lease ran out");
    }
  }

  bool lease_expired() {
    std::lock_guard g(mutex_);
    return child_ != 0 && lease_ && steady::now() >= lease_ends_;
  }

  void forward(int sig) {
    std::lock_guard g(mutex_);
    if (child_ != 0) {
      kill(child_, sig);
    } else if (acquired_) {
      pending_ = sig;
    } else if (cancelled_by_ == 0) {
      cancelled_by_ = sig;
      stop_.request_stop();  // ends the wait for the lock
    }
  }

  std::stop_source stop_;
  std::optional<std::chrono::milliseconds> lease_;
  steady::time_point lease_ends_{};
  pid_t child_ = 0;
  std::atomic<int> cancelled_by_{0};
  std::atomic<bool> done_{false};
  std::mutex mutex_;  // guards the child's life cycle, pending_, acquired_, lost_
  bool acquired_ = false;
  int pending_ = 0;
  bool lost_ = false;
  std::string lost_why_;
  std::thread thread_;  // last: starts once everything above exists
};

pid_t spawn(const run_options& o, int& spawn_error) {
  std::vector<std::string> env_strings{"RELOCK_NAME=" + o.name};
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RELOCK_NAME=", 12) != 0) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The child starts with the signals we block unblocked and at their defaults.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults = forwarded_signals();
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  spawn_error = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  return spawn_error == 0 ? pid : 0;
}

int exit_status_of(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : exit_usage;
}

}  // namespace

int run_command(const global_options& g, const run_options& o) {
  if (o.kind != "lock" || o.shared || o.exclusive) {
    const std::string kind = o.shared ? "read (-s)" : o.exclusive ? "write (-x)" : o.kind;
    throw failure(exit_usage, "lock kind '" + kind +
                                  "' is not yet available in this version; only --kind lock is");
  }
  std::optional<std::chrono::milliseconds> wait, lease;
  if (o.wait_seconds) wait = to_duration(*o.wait_seconds, "--wait", true);
  if (o.lease_seconds) lease = to_duration(*o.lease_seconds, "--lease", false);

  // Blocked before any thread starts, so every thread inherits it and only the watcher takes
  // these signals.
  const sigset_t set = forwarded_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::stop_source stop;
  signal_watcher watcher(stop, lease);
  auto settings = make_config(g);
  settings.on_lock_lost = [&watcher](std::string_view, std::string_view) {
    watcher.lost("the watchdog found it gone (deleted, or expired while Redis was unreachable)");
  };
  auto client = connect(g, std::move(settings));
  auto lock = client.lock(o.name);
  const auto me = relock::owner::current_thread();

  relock::lock_options options;
  options.lease = lease;
  options.stop = stop.get_token();
  bool acquired = false;
  try {
    if (o.nonblock || wait) {
      if (!o.nonblock) options.wait = wait;
      acquired = lock.async_try_lock(me, options, asio::use_future).get();
    } else {
      lock.async_lock(me, options, asio::use_future).get();
      acquired = true;
    }
  } catch (const std::system_error& e) {
    if (e.code() == relock::errc::cancelled && watcher.cancelled_by() != 0) {
      return 128 + watcher.cancelled_by();
    }
    throw failure(exit_usage, "cannot lock '" + o.name + "': " + e.code().message());
  }
  if (!acquired) {
    std::cerr << "relock: '" << o.name << "' is held by someone else"
              << (o.nonblock ? "" : " (gave up after " + std::to_string(*o.wait_seconds) + " s)")
              << "\n";
    return o.conflict_exit_code;
  }

  if (int sig = watcher.take_pending()) {
    std::error_code ignored;
    lock.unlock(ignored);
    return 128 + sig;
  }
  int spawn_error = 0;
  const pid_t child = spawn(o, spawn_error);
  int result;
  if (child == 0) {
    std::cerr << "relock: cannot run '" << o.command.front() << "': " << std::strerror(spawn_error)
              << "\n";
    result = spawn_error == ENOENT ? exit_not_found : exit_cannot_run;
  } else {
    watcher.child_started(child);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    watcher.child_ended();
    result = exit_status_of(status);
  }

  std::error_code ec;
  lock.unlock(ec);
  if (auto why = watcher.lost_reason()) {
    std::cerr << "relock: lost the lock '" << o.name << "' while the command ran: " << *why
              << "; the command was sent SIGTERM\n";
    return exit_lock_lost;
  }
  if (ec == relock::errc::lock_lost) {
    std::cerr << "relock: the lock '" << o.name << "' was lost before the command ended\n";
    return exit_lock_lost;
  }
  if (ec) std::cerr << "relock: warning: releasing '" << o.name << "' failed: " << ec.message() << "\n";
  return result;
}

}  // namespace relock_cli
