#include "support/sentinel_set.hpp"

#include <stdexcept>
#include <thread>

#include "support/free_port.hpp"
#include "support/redis_config.hpp"
#include "support/wait.hpp"

namespace relock::test {
namespace {

using namespace std::chrono_literals;

constexpr auto ready_timeout = 10s;
constexpr int launch_attempts = 5;

// A field of a flat name/value array (SENTINEL MASTER, an entry of SENTINEL REPLICAS).
std::string field(const resp::reply& r, const std::string& name) {
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    if (r.elements[i].str == name) return r.elements[i + 1].str;
  }
  return {};
}

std::string role_of(raw_client& c) {
  auto r = c.command({"ROLE"});
  return r.elements.empty() ? std::string() : r.elements[0].str;
}

}  // namespace

sentinel_set::sentinel_set(sentinel_options options)
    : options_(std::move(options)), dir_("relock-sentinel") {
  std::vector<std::string> common{"repl-diskless-sync-delay 0"};
  if (!options_.data_password.empty()) {
    common.push_back("masterauth " + config_quote(options_.data_password));
  }
  data_.push_back(std::make_unique<redis_server>(
      redis_options{.password = options_.data_password, .extra_config = common}));
  auto replica_config = common;
  replica_config.push_back("replicaof 127.0.0.1 " + std::to_string(data_[0]->port()));
  data_.push_back(std::make_unique<redis_server>(
      redis_options{.password = options_.data_password, .extra_config = replica_config}));
  sentinels_.reserve(static_cast<std::size_t>(options_.sentinels));
  for (int i = 0; i < options_.sentinels; ++i) {
    sentinels_.emplace_back();
    sentinel_ports_.push_back(0);
    start_sentinel(static_cast<std::size_t>(i));
  }
  wait_healthy();
}

sentinel_set::~sentinel_set() {
  for (auto& s : sentinels_) s.kill();
}

void sentinel_set::start_sentinel(std::size_t i) {
  const auto program = find_program("redis-sentinel", "/usr/bin/redis-sentinel");
  const auto dir = dir_.path() / ("sentinel-" + std::to_string(i));
  std::filesystem::create_directories(dir);
  for (int attempt = 1;; ++attempt) {
    sentinel_ports_[i] = free_loopback_port();
    const std::string& name = options_.master_name;
    std::string conf =
        "port " + std::to_string(sentinel_ports_[i]) +
        "\nbind 127.0.0.1\ndaemonize no\nlogfile \"\"\ndir " + config_quote(dir.string()) +
        "\nsentinel resolve-hostnames no\n" + "sentinel monitor " + name + " 127.0.0.1 " +
        std::to_string(data_[0]->port()) + " " + std::to_string(options_.quorum) +
        "\nsentinel down-after-milliseconds " + name + " " +
        std::to_string(options_.down_after.count()) + "\nsentinel failover-timeout " + name + " " +
        std::to_string(options_.failover_timeout.count()) + "\nsentinel parallel-syncs " + name +
        " 1\n";
    if (!options_.data_password.empty()) {
      conf += "sentinel auth-pass " + name + " " + config_quote(options_.data_password) + "\n";
    }
    if (!options_.sentinel_password.empty()) {
      conf += "requirepass " + config_quote(options_.sentinel_password) + "\n";
      conf += "sentinel sentinel-pass " + config_quote(options_.sentinel_password) + "\n";
    }
    const auto config = dir / "sentinel.conf";
    write_file(config, conf);
    sentinels_[i].spawn({program.string(), config.string()}, dir / "sentinel.log");
    const auto started = sentinels_[i].wait_started(
        [&] {
          try {
            return sentinel(i).command({"PING"}).str == "PONG";
          } catch (const std::runtime_error&) {
            return false;
          }
        },
        ready_timeout, "redis-sentinel on port " + std::to_string(sentinel_ports_[i]));
    if (started == server_process::start::ready) return;
    if (attempt == launch_attempts) throw std::runtime_error("redis-sentinel found no free port");
  }
}

std::string sentinel_set::url() const {
  std::string url = "redis-sentinel://";
  for (std::size_t i = 0; i < sentinel_ports_.size(); ++i) {
    url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinel_ports_[i]);
  }
  return url + "/" + options_.master_name;
}

std::vector<std::uint16_t> sentinel_set::data_ports() const {
  return {data_[0]->port(), data_[1]->port()};
}

redis_server& sentinel_set::data(std::uint16_t port) {
  for (auto& d : data_) {
    if (d->port() == port) return *d;
  }
  throw std::invalid_argument("no data node on port " + std::to_string(port));
}

const redis_server& sentinel_set::data(std::uint16_t port) const {
  return const_cast<sentinel_set*>(this)->data(port);
}

raw_client sentinel_set::client(std::uint16_t data_port) const {
  return raw_client("127.0.0.1", data(data_port).port(), options_.data_password, {}, 5s);
}

raw_client sentinel_set::sentinel(std::size_t i) const {
  return raw_client("127.0.0.1", sentinel_ports_.at(i), options_.sentinel_password, {}, 2s);
}

std::uint16_t sentinel_set::master_port() const {
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (sentinels_[i].paused()) continue;
    try {
      auto r = sentinel(i).command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
      if (r.elements.size() == 2) return static_cast<std::uint16_t>(std::stoi(r.elements[1].str));
    } catch (const std::exception&) {
    }
  }
  throw std::runtime_error("no sentinel names a master");
}

std::uint16_t sentinel_set::replica_port() const {
  const auto master = master_port();
  return data_[0]->port() == master ? data_[1]->port() : data_[0]->port();
}

std::uint16_t sentinel_set::wait_for_new_master(std::uint16_t old_master,
                                                std::chrono::milliseconds timeout) {
  std::uint16_t found = 0;
  auto moved = [&] {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      if (sentinels_[i].paused()) continue;
      try {
        auto r = sentinel(i).command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
        if (r.elements.size() != 2) return false;
        const auto port = static_cast<std::uint16_t>(std::stoi(r.elements[1].str));
        if (port == old_master || (found != 0 && port != found)) return false;
        found = port;
      } catch (const std::exception&) {
        return false;
      }
    }
    try {
      auto c = client(found);
      return role_of(c) == "master";
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!wait_until(
          [&] {
            found = 0;
            return moved();
          },
          timeout, 20ms)) {
    throw std::runtime_error("no new master after " + std::to_string(timeout.count()) +
                             " ms: " + health_problem());
  }
  return found;
}

std::uint16_t sentinel_set::failover(std::chrono::milliseconds timeout) {
  const auto old_master = master_port();
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (sentinels_[i].paused()) continue;
    auto r = sentinel(i).command({"SENTINEL", "FAILOVER", options_.master_name});
    if (r.is_error()) throw std::runtime_error("SENTINEL FAILOVER: " + r.str);
    break;
  }
  return wait_for_new_master(old_master, timeout);
}

void sentinel_set::kill(std::uint16_t port) { data(port).kill(); }

void sentinel_set::restart(std::uint16_t port) {
  auto& node = data(port);
  node.start();
  // Sentinel would demote it too, but only after noticing it is back.
  const auto master = master_port();
  if (master != port) {
    client(port).command({"REPLICAOF", "127.0.0.1", std::to_string(master)});
  }
}

void sentinel_set::pause(std::uint16_t port) { data(port).pause(); }
void sentinel_set::resume(std::uint16_t port) { data(port).resume(); }
void sentinel_set::pause_sentinel(std::size_t i) { sentinels_.at(i).pause(); }
void sentinel_set::resume_sentinel(std::size_t i) { sentinels_.at(i).resume(); }
bool sentinel_set::running(std::uint16_t port) { return data(port).running(); }

std::string sentinel_set::health_problem() const {
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (sentinels_[i].paused()) return "sentinel " + std::to_string(i) + " is paused";
  }
  try {
    std::uint16_t master = 0;
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      auto s = sentinel(i);
      auto named = s.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
      if (named.elements.size() != 2) return "sentinel " + std::to_string(i) + " names no master";
      const auto port = static_cast<std::uint16_t>(std::stoi(named.elements[1].str));
      if (master != 0 && port != master) return "the sentinels disagree on the master";
      master = port;
      auto about = s.command({"SENTINEL", "MASTER", options_.master_name});
      if (field(about, "flags") != "master") {
        return "sentinel " + std::to_string(i) + " flags the master " + field(about, "flags");
      }
      if (field(about, "num-other-sentinels") != std::to_string(options_.sentinels - 1)) {
        return "sentinel " + std::to_string(i) + " knows " + field(about, "num-other-sentinels") +
               " other sentinels";
      }
      auto replicas = s.command({"SENTINEL", "REPLICAS", options_.master_name});
      int healthy = 0;
      for (const auto& r : replicas.elements) {
        if (field(r, "flags") == "slave" && field(r, "master-link-status") == "ok") ++healthy;
      }
      if (healthy != 1) return "sentinel " + std::to_string(i) + " sees no healthy replica";
    }
    auto m = client(master);
    if (role_of(m) != "master") return "the named master does not say ROLE master";
    const std::string info = m.command({"INFO", "replication"}).str;
    if (info.find("state=online") == std::string::npos) return "the master has no replica online";
    // The replica acknowledges a write, as lock writes with replica sync need.
    m.command({"SET", "relock-sentinel-set:health", "1"});
    if (m.command({"WAIT", "1", "200"}).integer != 1) return "the replica acknowledges no write";
    m.command({"DEL", "relock-sentinel-set:health"});
    const std::uint16_t other = data_[0]->port() == master ? data_[1]->port() : data_[0]->port();
    auto r = client(other);
    if (r.command({"INFO", "replication"}).str.find("master_link_status:up") == std::string::npos) {
      return "the replica's link is down";
    }
  } catch (const std::exception& e) {
    return std::string("a node did not answer: ") + e.what();
  }
  return {};
}

void sentinel_set::wait_healthy(std::chrono::milliseconds timeout) const {
  std::string problem;
  if (!wait_until([&] { return (problem = health_problem()).empty(); }, timeout, 50ms)) {
    throw std::runtime_error("the Sentinel set is not healthy after " +
                             std::to_string(timeout.count()) + " ms: " + problem);
  }
}

void sentinel_set::restore(std::chrono::milliseconds timeout) {
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (sentinels_[i].paused()) sentinels_[i].resume();
  }
  for (auto& d : data_) {
    if (!d->running()) {
      restart(d->port());
    }
  }
  // A paused data node: resume it (redis_server knows no paused(); resume is harmless).
  for (auto& d : data_) d->resume();
  wait_healthy(timeout);
}

sentinel_set& shared_sentinel_set() {
  static sentinel_set set;
  return set;
}

}  // namespace relock::test
