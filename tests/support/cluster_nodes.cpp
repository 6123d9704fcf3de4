// SPDX-License-Identifier: Apache-2.0
#include "support/cluster_nodes.hpp"

#include "support/free_port.hpp"
#include "support/log_file.hpp"
#include "support/raw_client.hpp"
#include "support/redis_config.hpp"
#include "support/server_kind.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <stdexcept>
#include <thread>

#include "process/cluster_create.hpp"

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Redis listens for its cluster bus on the client port + 10000 (the default cluster-port).
constexpr unsigned bus_offset = 10000;
constexpr auto ready_timeout = 10s;
// redis-cli waits for the nodes to agree, polling once a second; a create takes 1-3 s.
constexpr auto create_timeout = 60s;
// A free port can still be taken before Redis binds it (both the port and its bus port).
constexpr int launch_attempts = 5;

bool loopback_port_free(unsigned port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);  // never listened on: leaves no TIME_WAIT behind
  return free;
}

// A free port whose bus port is free and below 65536, clashing with none in `taken` (ports and
// bus ports of the other nodes).
std::uint16_t pick_port(const std::set<unsigned>& taken) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    unsigned port = free_loopback_port();
    unsigned bus = port + bus_offset;
    if (bus > 65535 || taken.count(port) || taken.count(bus) || !loopback_port_free(bus)) continue;
    return static_cast<std::uint16_t>(port);
  }
  throw std::runtime_error("no free loopback port with a free cluster bus port (port + 10000)");
}

std::set<unsigned> ports_of(const std::vector<cluster_node>& nodes) {
  std::set<unsigned> taken;
  for (const auto& n : nodes) {
    taken.insert(n.port);
    taken.insert(n.port + bus_offset);
    if (n.tls_port != 0) taken.insert(n.tls_port);
  }
  return taken;
}

// A free port for TLS, clashing with none in `taken`.
std::uint16_t pick_tls_port(const std::set<unsigned>& taken) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    unsigned port = free_loopback_port();
    if (!taken.count(port)) return static_cast<std::uint16_t>(port);
  }
  throw std::runtime_error("no free loopback port for TLS");
}

std::vector<std::string> cluster_config(const cluster_options& options) {
  std::vector<std::string> config = {
      "cluster-enabled yes",
      // Relative to `dir`: kept across restarts, so a restarted node rejoins as itself.
      "cluster-config-file nodes.conf",
      "cluster-node-timeout " + std::to_string(options.node_timeout.count()),
      // Redis's default: a cluster with an uncovered slot refuses every key, as in production.
      "cluster-require-full-coverage yes",
      // A replica fails over however long ago it last heard its master: a test that pauses
      // replication must not make the failover it then waits for impossible.
      "cluster-replica-validity-factor 0",
      // Redis 7 waits 5 s by default for more replicas before a diskless full sync; a replica
      // that (re)joins should sync at once.
      "repl-diskless-sync yes",
      "repl-diskless-sync-delay 0",
      // CLUSTER SLOTS lists a replica only once its replication offset is not 0, and an idle
      // master moves the offset only with the PING it sends its replicas, every 10 s by
      // default: 1 s lets a new cluster show its replicas to clients within a second.
      "repl-ping-replica-period 1",
  };
  // Valkey 9 has numbered databases in cluster mode, 1 by default; 16 (a standalone server's
  // count) lets tests/cluster/cluster_database_test.cpp select one through a cluster URL. Redis
  // knows no such setting and would refuse to start with it.
  if (test_server_kind() == server_kind::valkey) config.push_back("cluster-databases 16");
  return config;
}

// With TLS: the bus and the replication on TLS too, as a TLS deployment runs them. The bus port
// stays port + 10000 (with tls-cluster Redis would otherwise put it at tls-port + 10000).
std::vector<std::string> tls_config(const cluster_options& options, const cluster_node& node) {
  if (options.tls_cert_file.empty()) return {};
  return {"tls-cluster yes", "tls-replication yes",
          "cluster-port " + std::to_string(node.port + bus_offset)};
}

bool answers_as(const cluster_node& node) {
  // The PID, not just PING: if another process took the port first, ours fails to bind and
  // exits, but the other one would answer.
  try {
    raw_client probe(node.host, node.port, {}, {}, 250ms);
    auto info = probe.command({"INFO", "server"});
    return info.is_string() &&
           info.str.find("process_id:" + std::to_string(node.pid) + "\r\n") != std::string::npos;
  } catch (const std::runtime_error&) {
    return false;  // not listening yet
  }
}

}  // namespace

cluster_nodes::cluster_nodes(const cluster_options& options)
    : options_(options),
      server_program_(server_program()),
      cli_program_(find_program("redis-cli", "/usr/bin/redis-cli")),
      dir_("relock-cluster") {
  if (options_.masters < 1 || options_.replicas_per_master < 0) {
    throw std::invalid_argument("cluster_options: needs at least one master");
  }
  const auto count =
      static_cast<std::size_t>(options_.masters * (1 + options_.replicas_per_master));
  for (std::size_t i = 0; i < count; ++i) {
    auto dir = dir_.path() / ("node-" + std::to_string(i + 1));
    std::filesystem::create_directory(dir);
    nodes_.push_back({.host = "127.0.0.1", .port = 0, .pid = -1, .dir = dir});
    processes_.emplace_back();
    for (int attempt = 1;; ++attempt) {
      // The port that just failed stays among the taken ones, so it is not picked again.
      nodes_[i].port = pick_port(ports_of(nodes_));
      if (!options_.tls_cert_file.empty()) nodes_[i].tls_port = pick_tls_port(ports_of(nodes_));
      if (launch(i) == launch_result::ready) break;
      if (attempt == launch_attempts) {
        throw std::runtime_error("redis-server could not bind a free port and its bus port in " +
                                 std::to_string(launch_attempts) + " attempts:\n" +
                                 processes_[i].output_tail());
      }
    }
  }
  create_cluster();
}

cluster_nodes::~cluster_nodes() {
  // SIGKILL: nothing is persisted but nodes.conf, and that is removed with the dir.
  for (auto& p : processes_) p.kill();
}

std::size_t cluster_nodes::index_of(std::uint16_t port) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].port == port) return i;
  }
  throw std::invalid_argument("no cluster node on port " + std::to_string(port));
}

bool cluster_nodes::running(std::uint16_t port) { return processes_[index_of(port)].running(); }

void cluster_nodes::kill(std::uint16_t port) { processes_[index_of(port)].kill(); }

pid_t cluster_nodes::restart(std::uint16_t port) {
  const auto i = index_of(port);
  if (processes_[i].running()) {
    throw std::logic_error("cluster node " + nodes_[i].address() + " (pid " +
                           std::to_string(nodes_[i].pid) + ") still runs");
  }
  // Same port by contract (the others know the node by it), so wait briefly on a lost race.
  for (int attempt = 1;; ++attempt) {
    if (launch(i) == launch_result::ready) return nodes_[i].pid;
    if (attempt == launch_attempts) {
      throw std::runtime_error("cluster node " + nodes_[i].address() +
                               " could not bind its ports again:\n" + log_tail(port));
    }
    std::this_thread::sleep_for(100ms);
  }
}

std::string cluster_nodes::log_tail(std::uint16_t port, std::size_t lines) const {
  return processes_[index_of(port)].output_tail(lines);
}

cluster_nodes::launch_result cluster_nodes::launch(std::size_t i) {
  auto& node = nodes_[i];
  auto& process = processes_[i];
  const auto config = node.dir / "redis.conf";
  const auto log = node.dir / "redis.log";
  redis_options redis{.extra_config = cluster_config(options_),
                      .tls_cert_file = options_.tls_cert_file,
                      .tls_key_file = options_.tls_key_file,
                      .tls_ca_file = options_.tls_ca_file};
  for (auto& line : tls_config(options_, node)) redis.extra_config.push_back(std::move(line));
  for (const auto& line : options_.extra_config) redis.extra_config.push_back(line);
  write_file(config, redis_config(redis, node.port, node.dir, log, node.tls_port));
  process.spawn({server_program_.string(), config.string()}, log);
  node.pid = process.pid();
  return process.wait_started([&node] { return answers_as(node); }, ready_timeout,
                              "cluster node " + node.address()) == server_process::start::ready
             ? launch_result::ready
             : launch_result::port_in_use;
}

void cluster_nodes::create_cluster() {
  process::cluster_create request{.redis_cli = cli_program_,
                                  .replicas_per_master = options_.replicas_per_master,
                                  .log = dir_.path() / "create.log",
                                  .timeout = create_timeout};
  for (const auto& n : nodes_) request.nodes.push_back(n.address());
  const auto created = process::create_cluster(request);
  if (created.ok) return;
  throw std::runtime_error("redis-cli --cluster create " + created.problem + "; last lines of " +
                           request.log.string() + ":\n" + last_lines(request.log, 40));
}

}  // namespace relock::test
