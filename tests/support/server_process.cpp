// SPDX-License-Identifier: Apache-2.0
#include "support/server_process.hpp"

#include "support/log_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace relock::test {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Runs in the forked child of a possibly multi-threaded parent: only async-signal-safe calls
// until exec, and every buffer was prepared before fork.
[[noreturn]] void exec_child(char* const* argv, pid_t parent, int null_fd, int output_fd,
                             int error_pipe, unsigned max_fd) {
  // Die with the parent. Checking getppid afterwards closes the race where the parent died
  // between fork and prctl (we would then have been re-parented already).
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  // The child inherits the forking thread's signal mask; a server with SIGTERM blocked would
  // ignore stop().
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(null_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0) {
    int err = errno;
    (void)!::write(error_pipe, &err, sizeof err);
    ::_exit(127);
  }
  // Sockets of the test process (hiredis and Asio open them without CLOEXEC) must not live on
  // in the server, or closing them in the test would not disconnect anything.
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (unsigned fd = 3; fd < max_fd; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
  ::execv(argv[0], argv);
  int err = errno;
  (void)!::write(error_pipe, &err, sizeof err);
  ::_exit(127);
}

unsigned fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  return static_cast<unsigned>(std::min<rlim_t>(limit.rlim_cur, 65536));
}

}  // namespace

server_process::~server_process() { kill(); }

server_process::server_process(server_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      alive_(std::exchange(other.alive_, false)),
      paused_(std::exchange(other.paused_, false)),
      wait_status_(other.wait_status_),
      output_(std::move(other.output_)),
      output_offset_(other.output_offset_) {}

void server_process::spawn(std::vector<std::string> argv, std::filesystem::path output) {
  if (running()) {
    throw std::logic_error("server_process: pid " + std::to_string(pid_) + " still runs");
  }
  if (argv.empty()) throw std::invalid_argument("server_process: empty argv");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  std::error_code ignored;
  auto size = std::filesystem::file_size(output, ignored);
  output_offset_ = ignored ? 0 : size;
  output_ = std::move(output);

  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) throw_errno("open /dev/null");
  int output_fd = ::open(output_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (output_fd < 0) {
    ::close(null_fd);
    throw_errno("open " + output_.string());
  }
  // Reports a failed exec: EOF on the read end means exec succeeded (the write end is CLOEXEC).
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    ::close(null_fd);
    ::close(output_fd);
    throw_errno("pipe2");
  }
  const pid_t parent = ::getpid();
  const unsigned max_fd = fd_limit();
  const pid_t child = ::fork();
  if (child == 0) exec_child(args.data(), parent, null_fd, output_fd, error_pipe[1], max_fd);
  int fork_errno = errno;
  ::close(null_fd);
  ::close(output_fd);
  ::close(error_pipe[1]);
  if (child < 0) {
    ::close(error_pipe[0]);
    throw std::system_error(fork_errno, std::generic_category(), "fork");
  }
  pid_ = child;
  alive_ = true;
  paused_ = false;

  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n == sizeof exec_errno) {
    kill();  // already exiting; this reaps it
    throw std::system_error(exec_errno, std::generic_category(), "exec " + argv[0]);
  }
}

server_process::readiness server_process::wait_ready(const std::function<bool()>& answers,
                                                     std::chrono::milliseconds timeout,
                                                     std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!running()) return readiness::exited;
    if (answers()) return readiness::ready;
    if (std::chrono::steady_clock::now() >= deadline) return readiness::timed_out;
    std::this_thread::sleep_for(poll);
  }
}

void server_process::reaped(int status) {
  alive_ = false;
  paused_ = false;
  wait_status_ = status;
}

bool server_process::running() {
  if (!alive_) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped(status);
  } else if (r < 0 && errno == ECHILD) {
    reaped(0);  // reaped elsewhere (SIGCHLD set to SIG_IGN): it is gone either way
  }
  return alive_;
}

void server_process::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  if (paused_) resume();  // a stopped process only acts on SIGTERM once continued
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void server_process::kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);  // works on a stopped process too
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped(r == pid_ ? status : 0);
}

void server_process::pause() {
  if (paused_ || !running()) return;
  ::kill(pid_, SIGSTOP);
  // SIGSTOP takes effect asynchronously; WUNTRACED returns once the child has really stopped,
  // so a test's next request cannot slip in before the pause.
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WUNTRACED);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ && WIFSTOPPED(status)) {
    paused_ = true;
  } else if (r == pid_) {
    reaped(status);
  }
}

void server_process::resume() {
  if (!paused_ || !running()) return;
  ::kill(pid_, SIGCONT);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WCONTINUED);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ && !WIFCONTINUED(status)) {
    reaped(status);
  }
  paused_ = false;
}

std::string server_process::describe_exit() const {
  if (alive_) return "running";
  if (WIFEXITED(wait_status_)) {
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
  }
  if (WIFSIGNALED(wait_status_)) {
    return "killed by signal " + std::to_string(WTERMSIG(wait_status_));
  }
  return "gone";
}

bool server_process::exited_successfully() const {
  return pid_ > 0 && !alive_ && WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0;
}

std::string server_process::output_tail(std::size_t lines) const {
  return last_lines(output_, lines);
}

std::string server_process::output_since_spawn() const {
  return read_from(output_, output_offset_);
}

std::filesystem::path find_program(const std::string& program,
                                   const std::filesystem::path& fallback) {
  if (const char* path = std::getenv("PATH")) {
    std::string_view dirs = path;
    while (!dirs.empty()) {
      auto colon = dirs.find(':');
      std::filesystem::path candidate =
          std::filesystem::path(std::string(dirs.substr(0, colon))) / program;
      if (candidate.is_absolute() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
      dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    }
  }
  if (::access(fallback.c_str(), X_OK) == 0) return fallback;
  throw std::runtime_error(program + " not found on PATH nor at " + fallback.string() +
                           " (run scripts/setup)");
}

server_process::start server_process::wait_started(const std::function<bool()>& answers,
                                                   std::chrono::milliseconds timeout,
                                                   const std::string& who) {
  // Probing is a refused connect until the server listens: cheap, so poll often (starts take
  // ~3 ms).
  const auto ready = wait_ready(answers, timeout, std::chrono::milliseconds(2));
  if (ready == readiness::ready) return start::ready;
  if (ready == readiness::exited &&
      output_since_spawn().find("Address already in use") != std::string::npos) {
    return start::port_in_use;
  }
  const std::string what = ready == readiness::exited
                               ? describe_exit()
                               : "did not answer within " + std::to_string(timeout.count()) + " ms";
  kill();
  throw std::runtime_error(who + " " + what + "; last lines of " + output_.string() + ":\n" +
                           output_tail());
}

}  // namespace relock::test
