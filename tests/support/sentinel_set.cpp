// SPDX-License-Identifier: Apache-2.0
// sentinel_set: starting the processes, naming them, and the failures tests cause.
#include "support/sentinel_set.hpp"

#include "support/free_port.hpp"
#include "support/redis_config.hpp"
#include "support/server_kind.hpp"
#include "support/wait.hpp"

#include <charconv>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Generous for servers that start in milliseconds, so a loaded CI machine is not a failure.
constexpr auto sentinel_ready_timeout = 10s;
// The replica's first sync of an empty master takes milliseconds (diskless, no delay).
constexpr auto sync_timeout = 10s;
// The sentinels find each other through hello messages every 2 s, so a start takes ~2-3 s.
constexpr auto sentinel_startup_timeout = 30s;
// Binding a free port can still lose a race with another process; try a few ports.
constexpr int sentinel_launch_attempts = 5;
// Per command in the fixture's own checks.
constexpr auto sentinel_answer_timeout = 1s;

std::string address(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace

sentinel_set::sentinel_set(sentinel_options options)
    : options_(std::move(options)), sentinel_program_(sentinel_program()), dir_("relock-sentinel") {
  if (options_.sentinels < 1 || options_.quorum < 1 || options_.quorum > options_.sentinels) {
    throw std::invalid_argument("sentinel_options: needs 1 <= quorum <= sentinels");
  }
  start_data_nodes();
  // A sentinel learns of replicas from the master's INFO, which it asks for every 10 s: one
  // that asked before the replica attached would not list it for 10 s.
  wait_replica_synced();
  for (int i = 0; i < options_.sentinels; ++i) {
    auto node = std::make_unique<sentinel_node>();
    node->dir = dir_.path() / ("sentinel-" + std::to_string(i));
    std::filesystem::create_directory(node->dir);
    start_sentinel(*node);
    sentinels_.push_back(std::move(node));
  }
  wait_healthy(sentinel_startup_timeout);
}

sentinel_set::~sentinel_set() {
  // SIGKILL: nothing is persisted. The sentinels first (member order would have it so too), so
  // none of them reconfigures a data node while the set goes.
  for (auto& s : sentinels_) s->process.kill();
}

void sentinel_set::start_data_nodes() {
  set_replica_of(0, 0);
  std::vector<std::string> config{
      // Redis 7 waits 5 s for more replicas before a diskless full sync; a replica that
      // (re)joins should sync at once.
      "repl-diskless-sync yes",
      "repl-diskless-sync-delay 0",
  };
  if (!options_.data_password.empty()) {
    config.push_back("masterauth " + config_quote(options_.data_password));
  }
  for (std::size_t i = 0; i < 2; ++i) {
    auto node_config = config;
    // Last, so it is what counts: which master this node replicates, rewritten by restart()
    // before each start (redis_server writes the same redis.conf every time).
    node_config.push_back("include " + config_quote(replica_of_file(i).string()));
    if (i == 1) set_replica_of(1, data_[0]->port());
    data_.push_back(std::make_unique<redis_server>(
        redis_options{.password = options_.data_password, .extra_config = node_config}));
  }
}

void sentinel_set::wait_replica_synced() {
  const auto replica = data_[1]->port();
  auto synced = [&] {
    try {
      auto info = probe(replica).command({"INFO", "replication"}).str;
      return info.find("master_link_status:up\r\n") != std::string::npos &&
             info.find("master_sync_in_progress:0\r\n") != std::string::npos;
    } catch (const std::runtime_error&) {
      return false;
    }
  };
  if (!wait_until(synced, sync_timeout, 5ms)) {
    throw std::runtime_error("the replica " + address(replica) + " did not sync with " +
                             address(data_[0]->port()) + " within " +
                             std::to_string(sync_timeout.count()) + " s:\n" + log_tails(20));
  }
}

std::filesystem::path sentinel_set::replica_of_file(std::size_t i) const {
  return dir_.path() / ("data-" + std::to_string(i) + "-replica-of.conf");
}

void sentinel_set::set_replica_of(std::size_t i, std::uint16_t master) {
  write_file(replica_of_file(i), master == 0
                                     ? std::string("# a master\n")
                                     : "replicaof 127.0.0.1 " + std::to_string(master) + "\n");
}

std::string sentinel_set::sentinel_config(const sentinel_node& node) const {
  const std::string& name = options_.master_name;
  std::string c;
  auto line = [&c](const std::string& text) { c += text + "\n"; };
  line("port " + std::to_string(node.port));
  line("bind 127.0.0.1");
  line("daemonize no");
  // Empty: the log goes to stdout, which server_process appends to sentinel.log.
  line("logfile \"\"");
  // Sentinel rewrites its config (sentinel.conf here) as it learns replicas and other
  // sentinels; the dir holds nothing else.
  line("dir " + config_quote(node.dir.string()));
  line("protected-mode no");
  // Addresses are IPs, and announced as 127.0.0.1 whatever the socket says: what a sentinel
  // tells clients and the others is what they can reach.
  line("sentinel resolve-hostnames no");
  line("sentinel announce-hostnames no");
  line("sentinel announce-ip 127.0.0.1");
  line("sentinel monitor " + name + " 127.0.0.1 " + std::to_string(data_[0]->port()) + " " +
       std::to_string(options_.quorum));
  line("sentinel down-after-milliseconds " + name + " " +
       std::to_string(options_.down_after.count()));
  line("sentinel failover-timeout " + name + " " +
       std::to_string(options_.failover_timeout.count()));
  line("sentinel parallel-syncs " + name + " 1");
  if (!options_.data_password.empty()) {
    line("sentinel auth-pass " + name + " " + config_quote(options_.data_password));
  }
  if (!options_.sentinel_password.empty()) {
    line("requirepass " + config_quote(options_.sentinel_password));
    // What a sentinel presents to the others, which now want it too.
    line("sentinel sentinel-pass " + config_quote(options_.sentinel_password));
  }
  return c;
}

void sentinel_set::start_sentinel(sentinel_node& node) {
  for (int attempt = 1;; ++attempt) {
    node.port = free_loopback_port();
    const auto config = node.dir / "sentinel.conf";
    write_file(config, sentinel_config(node));
    node.process.spawn({sentinel_program_.string(), config.string()}, node.dir / "sentinel.log");
    const auto started =
        node.process.wait_started([&] { return answers(node); }, sentinel_ready_timeout,
                                  "redis-sentinel on " + address(node.port));
    if (started == server_process::start::ready) return;
    if (attempt == sentinel_launch_attempts) {
      throw std::runtime_error("redis-sentinel could not bind a free port in " +
                               std::to_string(sentinel_launch_attempts) +
                               " attempts; last lines of " + node.process.output().string() +
                               ":\n" + node.process.output_tail());
    }
  }
}

bool sentinel_set::answers(const sentinel_node& node) const {
  // The PID, not just PING: if another process took the port first, ours fails to bind and
  // exits, but the other one would answer.
  try {
    raw_client c("127.0.0.1", node.port, options_.sentinel_password, {}, 250ms);
    auto info = c.command({"INFO", "server"});
    return info.is_string() && info.str.find("process_id:" + std::to_string(node.process.pid()) +
                                             "\r\n") != std::string::npos;
  } catch (const std::runtime_error&) {
    return false;  // not listening yet
  }
}

std::string sentinel_set::url() const {
  std::string url = "redis-sentinel://";
  for (const auto& s : sentinels_) {
    if (s != sentinels_.front()) url += ',';
    url += address(s->port);
  }
  return url + "/" + options_.master_name;
}

std::vector<std::uint16_t> sentinel_set::sentinel_ports() const {
  std::vector<std::uint16_t> ports;
  for (const auto& s : sentinels_) ports.push_back(s->port);
  return ports;
}

std::vector<std::uint16_t> sentinel_set::data_ports() const {
  return {data_[0]->port(), data_[1]->port()};
}

std::size_t sentinel_set::index_of(std::uint16_t data_port) const {
  for (std::size_t i = 0; i < data_.size(); ++i) {
    if (data_[i]->port() == data_port) return i;
  }
  throw std::invalid_argument("no data node on port " + std::to_string(data_port));
}

std::uint16_t sentinel_set::other_than(std::uint16_t data_port) const {
  return data_[index_of(data_port) == 0 ? 1 : 0]->port();
}

raw_client sentinel_set::client(std::uint16_t data_port) const {
  return raw_client("127.0.0.1", data(data_port).port(), options_.data_password);
}

raw_client sentinel_set::sentinel(std::size_t i) const {
  return raw_client("127.0.0.1", sentinels_.at(i)->port, options_.sentinel_password);
}

raw_client sentinel_set::probe(std::uint16_t data_port) const {
  return raw_client("127.0.0.1", data(data_port).port(), options_.data_password, {},
                    sentinel_answer_timeout);
}

raw_client sentinel_set::probe_sentinel(std::size_t i) const {
  return raw_client("127.0.0.1", sentinels_.at(i)->port, options_.sentinel_password, {},
                    sentinel_answer_timeout);
}

std::string sentinel_set::role_of(std::uint16_t data_port) const {
  try {
    auto r = probe(data_port).command({"ROLE"});
    if (r.is_array() && !r.elements.empty()) return r.elements[0].str;
  } catch (const std::runtime_error&) {
  }
  return {};
}

std::uint16_t sentinel_set::named_by(std::size_t i) const {
  auto r = probe_sentinel(i).command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
  unsigned port = 0;
  if (r.is_array() && r.elements.size() == 2) {
    const auto& text = r.elements[1].str;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port > 65535) port = 0;
  }
  if (port == 0) {
    throw std::runtime_error("sentinel " + std::to_string(i) + " names no master: " + to_string(r));
  }
  return static_cast<std::uint16_t>(port);
}

bool sentinel_set::listening(std::size_t i) const {
  auto& node = *sentinels_.at(i);
  return node.process.running() && !node.process.paused();
}

std::optional<std::uint16_t> sentinel_set::agreed_master() const {
  std::optional<std::uint16_t> agreed;
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (!listening(i)) continue;
    try {
      const auto named = named_by(i);
      if (agreed && *agreed != named) return std::nullopt;
      agreed = named;
    } catch (const std::runtime_error&) {
      return std::nullopt;
    }
  }
  return agreed;
}

std::uint16_t sentinel_set::master_port() const {
  std::string problems;
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (!listening(i)) continue;
    try {
      return named_by(i);
    } catch (const std::runtime_error& e) {
      problems += std::string("\n  ") + e.what();
    }
  }
  throw std::runtime_error("no sentinel names the master" +
                           (problems.empty() ? " (none runs unpaused)" : ":" + problems));
}

std::uint16_t sentinel_set::replica_port() const { return other_than(master_port()); }

std::uint16_t sentinel_set::failover(std::chrono::milliseconds timeout) {
  const auto old_master = master_port();
  // One that is not in TILT mode, which would accept the request and act on it only when TILT
  // ends, up to 30 s later; the first listening one if all are.
  std::optional<std::size_t> asked;
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (!listening(i)) continue;
    if (!asked) asked = i;
    if (!in_tilt(i)) {
      asked = i;
      break;
    }
  }
  if (!asked) throw std::runtime_error("SENTINEL FAILOVER: no sentinel runs unpaused");
  // A forced failover needs no votes: the sentinel asked elects itself.
  auto r = sentinel(*asked).command({"SENTINEL", "FAILOVER", options_.master_name});
  if (r.is_error()) {
    throw std::runtime_error("sentinel " + std::to_string(*asked) + " refused SENTINEL FAILOVER: " +
                             r.str + " (" + health_problem() + ")");
  }
  return wait_for_new_master(old_master, timeout);
}

std::uint16_t sentinel_set::wait_for_new_master(std::uint16_t old_master,
                                                std::chrono::milliseconds timeout) {
  std::uint16_t found = 0;
  auto switched = [&] {
    const auto named = agreed_master();
    if (!named || *named == old_master || role_of(*named) != "master") return false;
    found = *named;
    return true;
  };
  if (!wait_until(switched, timeout, 10ms)) {
    // What they name and what it says it is, and the logs, which say who turned it back.
    const auto named = agreed_master();
    const std::string naming =
        named ? "they name " + address(*named) + ", which says ROLE '" + role_of(*named) + "'"
              : "they do not agree";
    throw std::runtime_error("the sentinels named no new master in place of " +
                             address(old_master) + " within " + std::to_string(timeout.count()) +
                             " ms: " + naming + "; " + health_problem() + "\n" + log_tails(15));
  }
  return found;
}

void sentinel_set::kill(std::uint16_t data_port) {
  data(data_port).kill();
  paused_data_.erase(data_port);
}

void sentinel_set::restart(std::uint16_t data_port) {
  if (data(data_port).running()) {
    throw std::logic_error("sentinel_set::restart: the data node " + address(data_port) +
                           " still runs");
  }
  // Started as a replica rather than left for Sentinel to convert: that would take ~10 s, and
  // until then an empty node would say ROLE master.
  const auto master = master_port();
  set_replica_of(index_of(data_port), master == data_port ? 0 : master);
  data(data_port).start();
}

void sentinel_set::pause(std::uint16_t data_port) {
  data(data_port).pause();
  if (data(data_port).running()) paused_data_.insert(data_port);
}

void sentinel_set::resume(std::uint16_t data_port) {
  data(data_port).resume();
  paused_data_.erase(data_port);
}

void sentinel_set::pause_sentinel(std::size_t i) { sentinels_.at(i)->process.pause(); }

void sentinel_set::resume_sentinel(std::size_t i) { sentinels_.at(i)->process.resume(); }

bool sentinel_set::running(std::uint16_t data_port) { return data(data_port).running(); }

std::string sentinel_set::log_tails(std::size_t lines) const {
  std::string out;
  for (const auto& d : data_) {
    out += "--- redis-server " + address(d->port()) + ", " + (d->dir() / "redis.log").string() +
           ":\n" + d->log_tail(lines);
  }
  for (const auto& s : sentinels_) {
    out += "--- redis-sentinel " + address(s->port) + ", " + s->process.output().string() + ":\n" +
           s->process.output_tail(lines);
  }
  return out;
}

sentinel_set& shared_sentinel_set() {
  static sentinel_set set;
  return set;
}

}  // namespace relock::test
