// SPDX-License-Identifier: Apache-2.0
#include "process/spawn.hpp"

#include "process/reap.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace relock::process {
namespace {

// Everything the child needs, prepared before fork: between fork and exec a child of a
// multi-threaded parent may only make async-signal-safe calls (another thread may have held
// the malloc lock at the fork).
struct child_setup {
  char* const* argv;
  char* const* envp;
  bool search_path;
  pid_t parent;
  int null_fd;    // -1: keep our stdin, stdout and stderr
  int output_fd;  // -1: as above
  int report_fd;  // exec's errno goes here; close-on-exec, so success closes it unwritten
  sigset_t mask;
  const int* keep;  // sorted, each above 2
  std::size_t keep_count;
  unsigned max_fd;  // for kernels without close_range
};

void close_on_exec(unsigned first, unsigned last, unsigned max_fd) {
  if (first > last) return;
  if (::close_range(first, last, CLOSE_RANGE_CLOEXEC) == 0) return;
  for (unsigned fd = first; fd <= last && fd < max_fd; ++fd) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
}

[[noreturn]] void report_and_exit(int report_fd) {
  const int error = errno;
  (void)!::write(report_fd, &error, sizeof error);
  ::_exit(127);
}

[[noreturn]] void exec_child(const child_setup& s) {
  // Checking getppid afterwards closes the race where the parent died between fork and prctl
  // (we would have been re-parented by then, and no signal would ever come).
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != s.parent) ::_exit(127);
  // The child inherits the forking thread's mask, in which the caller may block signals it
  // reads from a signalfd.
  ::sigprocmask(SIG_SETMASK, &s.mask, nullptr);
  if (s.output_fd >= 0 &&
      (::dup2(s.null_fd, 0) < 0 || ::dup2(s.output_fd, 1) < 0 || ::dup2(s.output_fd, 2) < 0)) {
    report_and_exit(s.report_fd);
  }
  unsigned first = 3;
  for (std::size_t i = 0; i < s.keep_count; ++i) {
    const auto kept = static_cast<unsigned>(s.keep[i]);
    if (kept > first) close_on_exec(first, kept - 1, s.max_fd);
    first = kept + 1;
  }
  close_on_exec(first, ~0U, s.max_fd);
  if (s.search_path) {
    ::execvpe(s.argv[0], s.argv, s.envp);
  } else {
    ::execve(s.argv[0], s.argv, s.envp);
  }
  report_and_exit(s.report_fd);
}

unsigned fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  return static_cast<unsigned>(std::min<rlim_t>(limit.rlim_cur, 65536));
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// A descriptor closed when it goes, so every early throw below leaks nothing.
struct owned_fd {
  int fd = -1;
  ~owned_fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const spawn_options& options) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty argv");
  const auto args = pointers(argv);
  std::vector<char*> env;
  if (options.env) env = pointers(*options.env);
  std::vector<int> keep;
  for (int fd : options.keep_fds) {
    if (fd > 2) keep.push_back(fd);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());

  owned_fd null_fd, output_fd, report_read, report_write;
  if (!options.output.empty()) {
    null_fd.fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd.fd < 0) throw_errno("open /dev/null");
    output_fd.fd = ::open(options.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (output_fd.fd < 0) throw_errno("open " + options.output.string());
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw_errno("pipe2");
  report_read.fd = report[0];
  report_write.fd = report[1];

  child_setup setup{.argv = args.data(),
                    .envp = options.env ? env.data() : environ,
                    .search_path = options.search_path,
                    .parent = ::getpid(),
                    .null_fd = null_fd.fd,
                    .output_fd = output_fd.fd,
                    .report_fd = report_write.fd,
                    .mask = {},
                    .keep = keep.data(),
                    .keep_count = keep.size(),
                    .max_fd = fd_limit()};
  if (options.signal_mask) {
    setup.mask = *options.signal_mask;
  } else {
    ::sigemptyset(&setup.mask);
  }
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(setup);
  if (pid < 0) throw_errno("fork");
  ::close(std::exchange(report_write.fd, -1));  // else the read below never sees EOF

  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(report_read.fd, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    reap(pid);  // it has exited already, or is about to
    throw exec_error(exec_errno, argv.front());
  }
  return pid;
}

std::optional<std::filesystem::path> find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr || program.empty()) return std::nullopt;
  std::string_view dirs = path;
  for (;;) {
    const auto colon = dirs.find(':');
    auto candidate = std::filesystem::path(std::string(dirs.substr(0, colon))) / program;
    std::error_code ignored;
    if (candidate.is_absolute() && std::filesystem::is_regular_file(candidate, ignored) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

}  // namespace relock::process
