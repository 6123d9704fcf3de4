// SPDX-License-Identifier: Apache-2.0
// A private redis-server or Redis Cluster: see private_redis.hpp.
#include "private_redis.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <system_error>
#include <thread>

#include "cli.hpp"
#include "loopback.hpp"
#include "process/cluster_create.hpp"

namespace relock_cli {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using relock::process::child;

// redis-cli creates no cluster of fewer masters; the demo needs no replicas.
constexpr int cluster_masters = 3;
constexpr auto ready_timeout = 10s;
// redis-cli waits for the nodes to agree, polling once a second: a create takes 1-3 s.
constexpr auto cluster_timeout = 60s;
// A free port can still be taken before redis-server binds it: then it tries another.
constexpr int start_attempts = 5;
constexpr auto poll_interval = 20ms;  // every wait below has a deadline

const std::string no_redis_cli =
    "demo --cluster: no redis-cli on PATH to join a private cluster; install redis-cli or pass "
    "--url redis-cluster://HOST:PORT,...";

}  // namespace

std::filesystem::path private_redis::program(const std::string& name, const std::string& missing) {
  auto found = relock::process::find_on_path(name);
  if (!found) fail(missing, "");
  return *found;
}

void private_redis::starting(const std::string& name, const std::string& missing,
                             const std::function<void()>& start) {
  try {
    start();
  } catch (const relock::process::exec_error&) {
    fail(missing, "");  // found on PATH a moment ago, gone or not executable now
  } catch (const std::system_error& e) {
    fail("demo: cannot start " + name + ": " + e.what(), "");
  }
}

void private_redis::fail(const std::string& what, const std::string& log) {
  if (!log.empty()) dir_.keep();
  throw failure(exit_usage, what + (log.empty() ? "" : "; see " + log));
}

private_redis::private_redis(shape s) : shape_(s) {
  if (shape_ == shape::tls_server) tls_ = make_throwaway_tls(dir_.path());
  if (shape_ != shape::cluster) {
    std::set<unsigned> taken;
    const auto port = std::to_string(start_server(dir_.path(), taken));
    url_ = (shape_ == shape::tls_server ? "rediss://127.0.0.1:" : "redis://127.0.0.1:") + port;
    return;
  }
  std::set<unsigned> taken;  // every node's port and bus port
  std::vector<std::uint16_t> ports;
  for (int i = 1; i <= cluster_masters; ++i) {
    const std::string dir = dir_.path() + "/node-" + std::to_string(i);  // its own nodes.conf
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
  const std::string missing =
      node ? "demo --cluster: no redis-server on PATH to start a private cluster; "
             "install redis-server or pass --url redis-cluster://HOST:PORT,..."
           : "demo: no Redis at the default URL and no redis-server on PATH to start "
             "one; install redis-server or pass --url";
  const auto redis_server = program("redis-server", missing);
  const std::string log = dir + "/redis.log";
  for (int attempt = 1;; ++attempt) {
    // A port that failed stays taken, so it is not picked again.
    const auto port = loopback::free_port(taken, node);
    taken.insert(port);
    if (node) taken.insert(port + loopback::bus_offset);
    auto& server = servers_.emplace_back();
    starting("redis-server", missing,
             [&] { server.spawn(server_args(redis_server, port, dir, log), {.output = log}); });
    const auto ready = server.wait_ready([&] { return ours_answers(port, server.pid()); },
                                         ready_timeout, poll_interval);
    if (ready == child::readiness::ready) return port;
    if (ready == child::readiness::timed_out) {
      fail("demo: the private redis-server did not answer within " +
               std::to_string(ready_timeout.count()) + " s",
           "");
    }
    if (attempt == start_attempts || shape_ == shape::tls_server) {
      // With TLS, most likely a redis-server built without it: no other port would help.
      fail("demo: the private redis-server exited at start", log);
    }
    servers_.pop_back();  // reaped already; another port
  }
}

std::vector<std::string> private_redis::server_args(const std::filesystem::path& program,
                                                    std::uint16_t port, const std::string& dir,
                                                    const std::string& log) const {
  const std::string port_text = std::to_string(port);
  std::vector<std::string> args{program.string()};
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
  relock::process::cluster_create request{.redis_cli = program("redis-cli", no_redis_cli),
                                          .replicas_per_master = 0,
                                          .log = dir_.path() + "/create.log",
                                          .timeout = cluster_timeout};
  for (auto port : ports) request.nodes.push_back("127.0.0.1:" + std::to_string(port));
  const auto deadline = steady::now() + cluster_timeout;
  const std::string within = " within " + std::to_string(cluster_timeout.count()) + " s";
  relock::process::cluster_created created;
  starting("redis-cli", no_redis_cli, [&] { created = relock::process::create_cluster(request); });
  const std::string log = request.log.string();
  if (created.timed_out) fail("demo: redis-cli --cluster create did not finish" + within, log);
  if (!created.ok) fail("demo: redis-cli --cluster create failed", log);
  for (auto port : ports) {
    while (loopback::ask(port, "CLUSTER INFO", 200ms).find("cluster_state:ok") ==
           std::string::npos) {
      if (steady::now() > deadline) {
        fail("demo: the private cluster did not reach cluster_state:ok" + within, log);
      }
      std::this_thread::sleep_for(poll_interval);
    }
  }
}

}  // namespace relock_cli
