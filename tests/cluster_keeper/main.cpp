// SPDX-License-Identifier: Apache-2.0
// relock_cluster_keeper: the Redis Cluster that the cluster tests of one ctest run share.
//   relock_cluster_keeper start STATE_FILE [--lifetime SECONDS]
//   relock_cluster_keeper stop STATE_FILE
// `start` forks a keeper that starts the cluster (redis_cluster), writes STATE_FILE and serves
// the tests' requests (kill, restart, nodes) on a Unix socket; `start` returns once the cluster
// is healthy. The keeper owns the servers: they die with it (PR_SET_PDEATHSIG), and it ends on
// SIGTERM (`stop`), when the process that ran `start` (ctest) ends, or after its lifetime
// (45 min by default), so a run that is killed leaves nothing behind. (Run `start` directly
// from ctest, not through a wrapper such as valgrind that exits with it.) It logs to
// STATE_FILE.log.
// `stop` signals the keeper by its PID, waits until it and its servers are gone, and removes
// their dir and STATE_FILE. Exit status: 0 done, 1 failed, 2 usage.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "process/reap.hpp"
#include "support/cluster_state.hpp"
#include "support/log_file.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// Far above a whole ctest run's cluster tests; only a safety net when nothing else stops it.
constexpr std::chrono::seconds default_lifetime = 45min;
constexpr auto start_timeout = 120s;
constexpr auto stop_timeout = 10s;
// A test process that connected and then hung must not stall the keeper for everyone.
constexpr auto request_read_timeout = 5s;
// Without pidfd_open, how often the keeper checks that ctest still runs.
constexpr int parent_poll_ms = 1000;

using clock_type = std::chrono::steady_clock;

long long ms_since(clock_type::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count();
}

fs::path log_of(const fs::path& state_file) {
  auto log = state_file;
  log += ".log";
  return log;
}

// ---------------------------------------------------------------- the keeper process

class keeper {
 public:
  keeper(fs::path state_file, pid_t watched, std::chrono::seconds lifetime)
      : state_file_(std::move(state_file)), watched_(watched), lifetime_(lifetime) {}

  // Starts the cluster, tells `start` through `ready_fd`, then serves until told to end.
  int run(int ready_fd);

 private:
  void log(const std::string& line) {
    std::cout << "[+" << ms_since(started_) / 1000.0 << " s] " << line << std::endl;
  }
  int listen_on(const std::string& name);
  void serve(int listen_fd, int signal_fd, int parent_fd);
  void answer(int connection);
  std::string handle(const std::string& request);
  void write_state();

  fs::path state_file_;
  pid_t watched_;
  std::chrono::seconds lifetime_;
  clock_type::time_point started_ = clock_type::now();
  std::optional<redis_cluster> cluster_;
  cluster_state state_;
};

int keeper::run(int ready_fd) {
  // Once only: `start` reads one line, then its end of the pipe sees EOF.
  auto report = [&ready_fd](const std::string& text) {
    if (ready_fd < 0) return;
    auto line = text + "\n";
    (void)!::write(ready_fd, line.data(), line.size());
    ::close(ready_fd);
    ready_fd = -1;
  };
  // SIGTERM (stop) and friends are read from a signalfd between requests. Blocked here, before
  // the servers are spawned; process::spawn unblocks them in its children.
  sigset_t signals;
  ::sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaddset(&signals, s);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    report(std::string("error signalfd: ") + std::strerror(errno));
    return 1;
  }
  // Ends with ctest: a pidfd becomes readable when the process exits.
  int parent_fd = static_cast<int>(::syscall(SYS_pidfd_open, watched_, 0));
  log("keeper pid " + std::to_string(::getpid()) + ", watching pid " + std::to_string(watched_) +
      (parent_fd < 0 ? " by polling" : " by pidfd") + ", lifetime " +
      std::to_string(lifetime_.count()) + " s");
  try {
    cluster_.emplace();
    state_.keeper_pid = ::getpid();
    state_.keeper_start_time = process_start_time(::getpid());
    state_.control = "relock-cluster-keeper-" + std::to_string(::getpid());
    state_.options = cluster_->options();
    int listen_fd = listen_on(state_.control);
    write_state();
    std::ostringstream up;
    up << "cluster up in " << ms_since(started_) << " ms; " << cluster_->seed_url();
    for (const auto& r : cluster_->slot_map()) {
      up << "\n  slots " << r.first << "-" << r.last << ": master " << r.master.address()
         << " (pid " << r.master.pid << ")";
      for (const auto& replica : r.replicas) {
        up << ", replica " << replica.address() << " (pid " << replica.pid << ")";
      }
    }
    log(up.str());
    report("ready " + up.str());
    serve(listen_fd, signal_fd, parent_fd);
  } catch (const std::exception& e) {
    log(std::string("failed: ") + e.what());
    report(std::string("error ") + e.what());
    cluster_.reset();
    return 1;
  }
  cluster_.reset();  // SIGKILLs and reaps every server, removes their dirs
  // Unless `stop` (or a newer keeper) has replaced or removed it already.
  try {
    if (read_cluster_state(state_file_).keeper_pid == ::getpid()) fs::remove(state_file_);
  } catch (const std::exception&) {
  }
  log("servers stopped, keeper exits");
  return 0;
}

int keeper::listen_on(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // abstract: sun_path[0] = 0
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 16) != 0) {
    throw std::runtime_error("control socket @" + name + ": " + std::strerror(errno));
  }
  return fd;
}

void keeper::serve(int listen_fd, int signal_fd, int parent_fd) {
  const auto end = started_ + lifetime_;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now());
    if (left <= 0ms) return log("lifetime of " + std::to_string(lifetime_.count()) + " s over");
    if (parent_fd < 0 && !process_alive(watched_)) return log("the watched process ended");
    pollfd fds[] = {{listen_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}, {parent_fd, POLLIN, 0}};
    int wait_ms = static_cast<int>(std::min<long long>(left.count(), parent_poll_ms));
    if (::poll(fds, parent_fd < 0 ? 2 : 3, wait_ms) < 0) continue;  // EINTR
    if (fds[1].revents != 0) {
      signalfd_siginfo info{};
      (void)!::read(signal_fd, &info, sizeof info);
      return log(std::string("signal ") + ::strsignal(static_cast<int>(info.ssi_signo)));
    }
    if (parent_fd >= 0 && fds[2].revents != 0) return log("the watched process ended");
    if (fds[0].revents != 0) {
      int connection = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection >= 0) answer(connection);
    }
  }
}

void keeper::answer(int connection) {
  // Only processes of our own user may kill our nodes.
  ucred peer{};
  socklen_t size = sizeof peer;
  std::string reply;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
      peer.uid != ::getuid()) {
    reply = "error not the keeper's user";
  } else {
    timeval tv{static_cast<time_t>(request_read_timeout.count()), 0};
    ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string request;
    char c;
    while (request.size() < 256 && ::read(connection, &c, 1) == 1 && c != '\n') request += c;
    try {
      reply = "ok" + handle(request);
    } catch (const std::exception& e) {
      reply = std::string("error ") + e.what();
    }
    // Every test asks for "nodes" (restore); only changes and errors are worth a line.
    if (!request.starts_with("nodes") || !reply.starts_with("ok")) log(request + " -> " + reply);
  }
  reply += '\n';
  (void)!::send(connection, reply.data(), reply.size(), MSG_NOSIGNAL);
  ::close(connection);
}

// "kill PORT" | "restart PORT" -> " PID" | "nodes" -> " PORT:PID:up|down ..."
std::string keeper::handle(const std::string& request) {
  std::istringstream in(request);
  std::string verb;
  unsigned port = 0;
  in >> verb >> port;
  if (verb == "nodes") {
    std::string nodes;
    for (const auto& n : cluster_->nodes()) {
      // Appended piece by piece, as below.
      nodes += ' ';
      nodes += std::to_string(n.port);
      nodes += ':';
      nodes += std::to_string(n.pid);
      nodes += cluster_->running(n) ? ":up" : ":down";
    }
    return nodes;
  }
  if (verb != "kill" && verb != "restart") {
    throw std::invalid_argument("unknown request '" + request + "'");
  }
  const auto& node = cluster_->node(static_cast<std::uint16_t>(port));
  if (verb == "kill") {
    cluster_->kill(node);
    return {};
  }
  cluster_->restart(node);
  write_state();
  std::string answer = " ";  // not " " + to_string(...): GCC 12 -O3 warns -Wrestrict wrongly
  answer += std::to_string(node.pid);
  return answer;
}

void keeper::write_state() {
  state_.nodes = cluster_->nodes();
  state_.dir = state_.nodes.front().dir.parent_path();
  write_cluster_state(state_file_, state_);
}

// ---------------------------------------------------------------- start and stop

int start(const fs::path& state_file, std::chrono::seconds lifetime) {
  if (fs::exists(state_file)) {
    std::optional<cluster_state> old;
    try {
      old = read_cluster_state(state_file);
    } catch (const std::runtime_error&) {
    }
    if (old && keeper_running(*old)) {
      std::cerr << "a cluster keeper (pid " << old->keeper_pid << ") already runs for "
                << state_file << "; stop it first\n";
      return 1;
    }
    fs::remove(state_file);  // left by a keeper that is gone
  }
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t watched = ::getppid();  // ctest
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    // The keeper: its own session (ctest's signals to the test's group do not reach it), and
    // none of ctest's pipes, or ctest would wait for it to close them.
    ::close(ready[0]);
    ::setsid();
    int null_fd = ::open("/dev/null", O_RDONLY);
    int log_fd = ::open(log_of(state_file).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null_fd < 0 || log_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 ||
        ::dup2(log_fd, 2) < 0 || ::dup2(ready[1], 3) < 0) {
      ::_exit(1);
    }
    ::close_range(4, ~0U, 0);
    (void)!::chdir("/");
    return keeper(state_file, watched, lifetime).run(3);
  }
  ::close(ready[1]);
  std::string answer;
  const auto deadline = clock_type::now() + start_timeout;
  for (char buffer[4096];;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    pollfd p{ready[0], POLLIN, 0};
    if (left <= 0ms || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
      ::kill(child, SIGKILL);  // it reads SIGTERM only once serving; its servers die with it
      answer =
          "error no answer from the keeper within " + std::to_string(start_timeout.count()) + " s";
      break;
    }
    ssize_t n = ::read(ready[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  if (answer.starts_with("ready ")) {
    std::cout << answer.substr(6) << "state: " << state_file.string()
              << "\nkeeper log: " << log_of(state_file).string() << "\n";
    return 0;
  }
  std::cerr << "the cluster did not come up: "
            << (answer.empty() ? "the keeper died" : answer.substr(answer.find(' ') + 1)) << "\n"
            << "keeper log " << log_of(state_file).string() << ":\n"
            << last_lines(log_of(state_file), 40);
  return 1;
}

int stop(const fs::path& state_file) {
  const auto started = clock_type::now();
  if (!fs::exists(state_file)) {
    std::cout << "no cluster state at " << state_file << ": nothing to stop\n";
    return 0;
  }
  auto state = read_cluster_state(state_file);
  const pid_t keeper_pid = state.keeper_pid;
  auto keeper_gone = [&] { return !keeper_running(state); };
  // Not our child (it left ctest's session): gone is what keeper_running says, which checks the
  // PID's start time too, so a reused PID is never signalled.
  if (relock::process::stop(keeper_pid, stop_timeout, keeper_gone) !=
      relock::process::stop_result::terminated) {
    std::cerr << "keeper " << keeper_pid << " ignored SIGTERM for " << stop_timeout.count()
              << " s; SIGKILL (its servers die with it)\n";
  }
  // The servers were the keeper's children and die with it; check, never signal: their PIDs
  // may belong to someone else by now.
  auto servers_gone = [&] {
    for (const auto& n : state.nodes) {
      if (process_alive(n.pid)) return false;
    }
    return true;
  };
  bool clean = keeper_gone() && wait_until(servers_gone, stop_timeout, 10ms);
  // Only a dir the keeper made, never whatever a damaged state file names.
  std::error_code ignored;
  if (state.dir.filename().string().starts_with("relock-cluster-")) {
    fs::remove_all(state.dir, ignored);
  }
  fs::remove(state_file, ignored);
  std::cout << "keeper " << keeper_pid << " and " << state.nodes.size() << " servers "
            << (clean ? "stopped" : "NOT all gone") << " in " << ms_since(started) << " ms\n";
  for (const auto& n : state.nodes) {
    if (process_alive(n.pid)) std::cerr << "  still running: pid " << n.pid << "\n";
  }
  // No one sees the keeper's exit status: a sanitizer report (a leak found at its exit, say)
  // would go unnoticed in its log, so it fails this test instead.
  const auto log = read_from(log_of(state_file), 0);
  if (log.find("Sanitizer") != std::string::npos ||
      log.find("runtime error:") != std::string::npos) {
    std::cerr << "the keeper's log has a sanitizer report:\n" << log;
    return 1;
  }
  return clean ? 0 : 1;
}

int usage() {
  std::cerr << "usage: relock_cluster_keeper start STATE_FILE [--lifetime SECONDS]\n"
               "       relock_cluster_keeper stop STATE_FILE\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string command = argv[1];
  const fs::path state_file = fs::absolute(argv[2]);
  try {
    if (command == "start") {
      auto lifetime = default_lifetime;
      if (argc == 5 && std::string(argv[3]) == "--lifetime") {
        lifetime = std::chrono::seconds(std::stoll(argv[4]));
      } else if (argc != 3) {
        return usage();
      }
      return start(state_file, lifetime);
    }
    if (command == "stop" && argc == 3) return stop(state_file);
  } catch (const std::exception& e) {
    std::cerr << "relock_cluster_keeper " << command << ": " << e.what() << "\n";
    return 1;
  }
  return usage();
}
