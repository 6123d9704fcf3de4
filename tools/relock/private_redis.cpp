// SPDX-License-Identifier: Apache-2.0
// A private redis-server or Redis Cluster: see private_redis.hpp.
#include "private_redis.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli.hpp"
#include "loopback.hpp"

namespace relock_cli {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// redis-cli creates no cluster of fewer masters; the demo needs no replicas.
constexpr int cluster_masters = 3;
constexpr auto ready_timeout = 10s;
// redis-cli waits for the nodes to agree, polling once a second: a create takes 1-3 s.
constexpr auto cluster_timeout = 60s;
// A free port can still be taken before redis-server binds it: then it tries another.
constexpr int start_attempts = 5;
constexpr auto poll_interval = 20ms;  // every wait below has a deadline

bool not_found(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 127; }

}  // namespace

private_redis::processes::~processes() {
  for (pid_t p : pids) kill(p, SIGKILL);  // nothing to save: a demo's data
  for (pid_t p : pids) waitpid(p, nullptr, 0);
}

pid_t private_redis::processes::spawn(const std::vector<std::string>& args,
                                      const std::string& output) {
  // Everything the child needs is built before fork: between fork and exec it may only make
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw failure(exit_usage, "demo: cannot fork " + args.front());
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);   // dies with us, even if we are killed
    if (getppid() != parent) _exit(1);  // we died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the demo blocks its stop signals; redis must not
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (in > STDERR_FILENO) close(in);
    if (out > STDERR_FILENO) close(out);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  pids.push_back(pid);
  return pid;
}

std::optional<int> private_redis::processes::ended(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
  std::erase(pids, pid);  // reaped: its PID may be reused, never to be killed again
  return status;
}

void private_redis::fail(const std::string& what, const std::string& log) {
  if (!log.empty()) own_.dir.keep();
  throw failure(exit_usage, what + (log.empty() ? "" : "; see " + log));
}

private_redis::private_redis(shape s) : shape_(s) {
  if (shape_ == shape::tls_server) tls_ = make_throwaway_tls(own_.dir.path());
  if (shape_ != shape::cluster) {
    std::set<unsigned> taken;
    const auto port = std::to_string(start_server(own_.dir.path(), taken));
    url_ = (shape_ == shape::tls_server ? "rediss://127.0.0.1:" : "redis://127.0.0.1:") + port;
    return;
  }
  std::set<unsigned> taken;  // every node's port and bus port
  std::vector<std::uint16_t> ports;
  for (int i = 1; i <= cluster_masters; ++i) {
    const std::string dir = own_.dir.path() + "/node-" + std::to_string(i);  // its own nodes.conf
    std::filesystem::create_directory(dir);
    ports.push_back(start_server(dir, taken));
  }
  create_cluster(ports);
  url_ = "redis-cluster://";
  for (std::size_t i = 0; i < ports.size(); ++i) {
    url_ += (i == 0 ? "127.0.0.1:" : ",127.0.0.1:") + std::to_string(ports[i]);
  }
}

std::uint16_t private_redis::start_server(const std::string& dir, std::set<unsigned>& taken) {
  const bool node = shape_ == shape::cluster;
  const std::string log = dir + "/redis.log";
  for (int attempt = 1;; ++attempt) {
    // A port that failed stays taken, so it is not picked again.
    const auto port = loopback::free_port(taken, node);
    taken.insert(port);
    if (node) taken.insert(port + loopback::bus_offset);
    const pid_t pid = own_.spawn(server_args(port, dir, log), log);
    const auto deadline = steady::now() + ready_timeout;
    for (;;) {
      if (ours_answers(port, pid)) return port;
      if (const auto status = own_.ended(pid)) {
        if (not_found(*status)) {
          fail(node ? "demo --cluster: no redis-server on PATH to start a private cluster; "
                      "install redis-server or pass --url redis-cluster://HOST:PORT,..."
                    : "demo: no Redis at the default URL and no redis-server on PATH to start "
                      "one; install redis-server or pass --url",
               "");
        }
        if (attempt == start_attempts || shape_ == shape::tls_server) {
          // With TLS, most likely a redis-server built without it: no other port would help.
          fail("demo: the private redis-server exited at start", log);
        }
        break;  // another port
      }
      if (steady::now() > deadline) {
        fail("demo: the private redis-server did not answer within " +
                 std::to_string(ready_timeout.count()) + " s",
             "");
      }
      std::this_thread::sleep_for(poll_interval);
    }
  }
}

std::vector<std::string> private_redis::server_args(std::uint16_t port, const std::string& dir,
                                                    const std::string& log) const {
  const std::string port_text = std::to_string(port);
  std::vector<std::string> args{"redis-server"};
  if (shape_ == shape::tls_server) {
    // Port 0: no plain-text port at all, so everything the demo says goes over TLS.
    args.insert(args.end(), {"--port", "0", "--tls-port", port_text, "--tls-cert-file",
                             tls_.server_cert, "--tls-key-file", tls_.server_key,
                             "--tls-ca-cert-file", tls_.ca_cert, "--tls-auth-clients", "no"});
  } else {
    args.insert(args.end(), {"--port", port_text});
  }
  args.insert(args.end(), {"--bind", "127.0.0.1", "--dir", dir, "--logfile", log});
  args.insert(args.end(), {"--save", "", "--appendonly", "no"});  // a demo's data: not kept
  if (shape_ == shape::cluster) {
    args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"});
  }
  return args;
}

bool private_redis::ours_answers(std::uint16_t port, pid_t pid) const {
  if (shape_ != shape::tls_server) {
    const std::string ours = "process_id:" + std::to_string(pid) + "\r\n";
    return loopback::ask(port, "INFO server", 200ms).find(ours) != std::string::npos;
  }
  relock::config probe;
  probe.url = "rediss://127.0.0.1:" + std::to_string(port);
  probe.tls.ca_file = tls_.ca_cert;
  probe.connect_timeout = 200ms;
  try {
    relock::client answered(probe);
    return true;
  } catch (const relock::error&) {
    return false;
  }
}

void private_redis::create_cluster(const std::vector<std::uint16_t>& ports) {
  std::vector<std::string> args{"redis-cli", "--cluster", "create"};
  for (auto port : ports) args.push_back("127.0.0.1:" + std::to_string(port));
  args.insert(args.end(), {"--cluster-replicas", "0", "--cluster-yes"});
  const std::string log = own_.dir.path() + "/create.log";
  const pid_t cli = own_.spawn(args, log);
  const auto deadline = steady::now() + cluster_timeout;
  const auto late = [&] { return steady::now() > deadline; };
  const std::string within = " within " + std::to_string(cluster_timeout.count()) + " s";
  std::optional<int> status;
  while (!(status = own_.ended(cli))) {
    if (late()) fail("demo: redis-cli --cluster create did not finish" + within, log);
    std::this_thread::sleep_for(poll_interval);
  }
  if (not_found(*status)) {
    fail(
        "demo --cluster: no redis-cli on PATH to join a private cluster; install redis-cli or pass "
        "--url redis-cluster://HOST:PORT,...",
        "");
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    fail("demo: redis-cli --cluster create failed", log);
  }
  for (auto port : ports) {
    while (loopback::ask(port, "CLUSTER INFO", 200ms).find("cluster_state:ok") ==
           std::string::npos) {
      if (late()) fail("demo: the private cluster did not reach cluster_state:ok" + within, log);
      std::this_thread::sleep_for(poll_interval);
    }
  }
}

}  // namespace relock_cli
