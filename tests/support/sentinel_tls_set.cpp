// SPDX-License-Identifier: Apache-2.0
#include "support/sentinel_tls_set.hpp"

#include "support/free_port.hpp"
#include "support/redis_config.hpp"
#include "support/server_kind.hpp"
#include "support/wait.hpp"

#include <stdexcept>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

constexpr auto tls_ready_timeout = 10s;
// The sentinels find each other by hello messages every 2 s.
constexpr auto tls_startup_timeout = 20s;
constexpr int tls_launch_attempts = 5;
constexpr auto tls_answer_timeout = 1s;

std::string percent(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

// The value of `key` in a flat key/value array reply, or "".
std::string kv_field(const resp::reply& kv, const std::string& key) {
  for (std::size_t i = 0; i + 1 < kv.elements.size(); i += 2) {
    if (kv.elements[i].str == key) return kv.elements[i + 1].str;
  }
  return {};
}

}  // namespace

sentinel_tls_set::sentinel_tls_set(const tls_files& files, tls_side side, bool by_name)
    : files_(files),
      side_(side),
      data_host_(tls_data() && by_name ? "localhost" : "127.0.0.1"),
      dir_("relock-sentinel-tls") {
  redis_options data{.extra_config = {"repl-diskless-sync yes", "repl-diskless-sync-delay 0"}};
  if (tls_data()) {
    data.tls_cert_file = files_.server_cert();
    data.tls_key_file = files_.server_key();
    data.tls_ca_file = files_.ca();
    // Replication over TLS, and the replica known by the name its certificate carries.
    data.extra_config.push_back("tls-replication yes");
    if (data_host_ != "127.0.0.1") data.extra_config.push_back("replica-announce-ip " + data_host_);
  }
  data_.push_back(std::make_unique<redis_server>(data));
  const auto& master = *data_[0];
  data.extra_config.push_back("replicaof " + data_host_ + " " +
                              std::to_string(tls_data() ? master.tls_port() : master.port()));
  data_.push_back(std::make_unique<redis_server>(data));
  for (int i = 0; i < 3; ++i) {
    auto node = std::make_unique<sentinel_node>();
    node->dir = dir_.path() / ("sentinel-" + std::to_string(i));
    std::filesystem::create_directory(node->dir);
    start_sentinel(*node);
    sentinels_.push_back(std::move(node));
  }
  std::string why;
  if (!wait_until([&] { return (why = problem(data_[0]->port())).empty(); }, tls_startup_timeout,
                  20ms)) {
    throw std::runtime_error("the TLS Sentinel set did not come up: " + why + "\n" + log_tails());
  }
}

sentinel_tls_set::~sentinel_tls_set() {
  // The sentinels first, so none of them reconfigures a data node while the set goes.
  for (auto& s : sentinels_) s->process.kill();
}

std::string sentinel_tls_set::sentinel_config(const sentinel_node& node) const {
  const auto& master = *data_[0];
  std::string c;
  auto line = [&c](const std::string& text) { c += text + "\n"; };
  line("port " + std::to_string(node.port));
  line("bind 127.0.0.1");
  line("daemonize no");
  line("logfile \"\"");
  line("dir " + config_quote(node.dir.string()));
  line("protected-mode no");
  if (node.tls_port != 0) {
    line("tls-port " + std::to_string(node.tls_port));
    line("tls-cert-file " + config_quote(files_.server_cert()));
    line("tls-key-file " + config_quote(files_.server_key()));
    line("tls-ca-cert-file " + config_quote(files_.ca()));
    line("tls-auth-clients no");
  }
  if (tls_data()) {
    // Every link of the sentinel by TLS (data nodes and the other sentinels, which announce
    // their TLS ports in their hellos), and the data nodes by the name their certificate has.
    line("tls-replication yes");
    if (data_host_ != "127.0.0.1") {
      line("sentinel resolve-hostnames yes");
      line("sentinel announce-hostnames yes");
    }
    line("sentinel monitor " + std::string(master_name) + " " + data_host_ + " " +
         std::to_string(master.tls_port()) + " 2");
  } else {
    line("sentinel monitor " + std::string(master_name) + " 127.0.0.1 " +
         std::to_string(master.port()) + " 2");
  }
  line("sentinel down-after-milliseconds " + std::string(master_name) + " 2000");
  line("sentinel failover-timeout " + std::string(master_name) + " 3000");
  return c;
}

void sentinel_tls_set::start_sentinel(sentinel_node& node) {
  const auto program = sentinel_program();
  // With TLS data nodes the sentinels reach each other by TLS, so they listen for it too.
  const bool tls = tls_sentinels() || tls_data();
  for (int attempt = 1;; ++attempt) {
    node.port = free_loopback_port();
    do {
      node.tls_port = tls ? free_loopback_port() : 0;
    } while (tls && node.tls_port == node.port);
    const auto config = node.dir / "sentinel.conf";
    write_file(config, sentinel_config(node));
    node.process.spawn({program.string(), config.string()}, node.dir / "sentinel.log");
    const auto pid = std::to_string(node.process.pid());
    const auto started = node.process.wait_started(
        [&] {
          try {
            raw_client c("127.0.0.1", node.port, {}, {}, 250ms);
            return c.command({"INFO", "server"}).str.find("process_id:" + pid + "\r\n") !=
                   std::string::npos;
          } catch (const std::runtime_error&) {
            return false;
          }
        },
        tls_ready_timeout, "redis-sentinel on 127.0.0.1:" + std::to_string(node.port));
    if (started == server_process::start::ready) return;
    if (attempt == tls_launch_attempts) {
      throw std::runtime_error("redis-sentinel could not bind free ports:\n" +
                               node.process.output_tail());
    }
  }
}

std::string sentinel_tls_set::url() const {
  std::string url = "rediss-sentinel://";
  for (const auto& s : sentinels_) {
    if (s != sentinels_.front()) url += ',';
    url += tls_sentinels() ? "localhost:" + std::to_string(s->tls_port)
                           : "127.0.0.1:" + std::to_string(s->port);
  }
  const char* side = side_ == tls_side::both ? "both" : tls_sentinels() ? "sentinels" : "data";
  return url + "/" + master_name + "?tls=" + side + "&tls_ca=" + percent(files_.ca());
}

std::uint16_t sentinel_tls_set::named_by(std::size_t i) const {
  try {
    raw_client c("127.0.0.1", sentinels_.at(i)->port, {}, {}, tls_answer_timeout);
    auto r = c.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name});
    if (!r.is_array() || r.elements.size() != 2) return 0;
    const auto named = std::stoi(r.elements[1].str);
    for (const auto& d : data_) {
      if (named == (tls_data() ? d->tls_port() : d->port())) return d->port();
    }
  } catch (const std::exception&) {
  }
  return 0;
}

std::uint16_t sentinel_tls_set::master_port() const {
  const auto port = named_by(0);
  if (port == 0) throw std::runtime_error("the first sentinel names no master");
  return port;
}

std::string sentinel_tls_set::announced(std::uint16_t data_port) const {
  for (const auto& d : data_) {
    if (d->port() != data_port) continue;
    return data_host_ + ":" + std::to_string(tls_data() ? d->tls_port() : d->port());
  }
  throw std::invalid_argument("no data node on port " + std::to_string(data_port));
}

raw_client sentinel_tls_set::client(std::uint16_t data_port) const {
  return raw_client("127.0.0.1", data_port);
}

std::string sentinel_tls_set::problem(std::uint16_t master) const {
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    const std::string who = "sentinel " + std::to_string(i) + ": ";
    if (named_by(i) != master) return who + "does not name " + std::to_string(master);
    try {
      raw_client c("127.0.0.1", sentinels_[i]->port, {}, {}, tls_answer_timeout);
      auto m = c.command({"SENTINEL", "MASTER", master_name});
      if (kv_field(m, "flags") != "master") return who + "flags the master " + kv_field(m, "flags");
      if (kv_field(m, "num-other-sentinels") != "2") return who + "does not know the others yet";
      auto replicas = c.command({"SENTINEL", "REPLICAS", master_name});
      if (replicas.elements.size() != 1 || kv_field(replicas.elements[0], "flags") != "slave") {
        return who + "does not count its replica online";
      }
    } catch (const std::runtime_error& e) {
      return who + e.what();
    }
  }
  return {};
}

std::uint16_t sentinel_tls_set::failover(std::chrono::milliseconds timeout) {
  const auto old_master = master_port();
  const auto new_master = data_[0]->port() == old_master ? data_[1]->port() : data_[0]->port();
  raw_client c("127.0.0.1", sentinels_[0]->port);
  auto r = c.command({"SENTINEL", "FAILOVER", master_name});
  if (r.is_error()) throw std::runtime_error("SENTINEL FAILOVER: " + r.str);
  auto switched = [&] {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      if (named_by(i) != new_master) return false;
    }
    try {
      return client(new_master).command({"ROLE"}).elements.at(0).str == "master";
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!wait_until(switched, timeout, 10ms)) {
    throw std::runtime_error("the sentinels did not switch to " + std::to_string(new_master) +
                             "\n" + log_tails());
  }
  return new_master;
}

std::string sentinel_tls_set::log_tails() const {
  std::string out;
  for (const auto& d : data_) out += "--- redis-server:\n" + d->log_tail(15);
  for (const auto& s : sentinels_) out += "--- redis-sentinel:\n" + s->process.output_tail(15);
  return out;
}

}  // namespace relock::test
