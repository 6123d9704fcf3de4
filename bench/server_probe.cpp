// SPDX-License-Identifier: Apache-2.0
// server_probe: what the server (or every node a cluster URL names) saw during a window, over
// plain hiredis connections of its own.
#include <stdexcept>

#include <hiredis/hiredis.h>

#include "driver.hpp"

namespace relock_bench {
namespace {

// redis://[user:pass@]host[:port][/db] -> "host:port"; redis-cluster://[user:pass@]h1:p1,h2:p2
// [?pubsub=MODE] -> one per node. The probe needs no password: bench/run starts its servers.
std::vector<std::pair<std::string, int>> host_ports(const std::string& url) {
  std::string rest = url;
  if (auto p = rest.find("://"); p != std::string::npos) rest = rest.substr(p + 3);
  if (auto p = rest.rfind('@'); p != std::string::npos) rest = rest.substr(p + 1);
  if (auto p = rest.find_first_of("/?"); p != std::string::npos) rest = rest.substr(0, p);
  std::vector<std::pair<std::string, int>> out;
  for (std::size_t start = 0; start <= rest.size();) {
    auto comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    std::string host = rest.substr(start, comma - start);
    int port = 6379;
    if (auto p = host.rfind(':'); p != std::string::npos) {
      port = std::stoi(host.substr(p + 1));
      host = host.substr(0, p);
    }
    out.emplace_back(host, port);
    start = comma + 1;
  }
  return out;
}

// The value of `field:` in an INFO text, or "" when absent.
std::string info_value(const std::string& text, const std::string& field) {
  const std::string needle = "\n" + field + ":";
  auto p = ("\n" + text).find(needle);
  if (p == std::string::npos) return {};
  auto start = p + needle.size() - 1;  // -1: the "\n" we prepended
  auto end = text.find_first_of("\r\n", start);
  return text.substr(start, end - start);
}

redisContext* ctx(void* context) { return static_cast<redisContext*>(context); }

// A reply, checked: throws on a lost connection or an error reply.
redisReply* checked(void* context, void* reply, const char* what) {
  auto* r = static_cast<redisReply*>(reply);
  if (r == nullptr) {
    throw std::runtime_error(std::string("probe: ") + what + ": " + ctx(context)->errstr);
  }
  if (r->type == REDIS_REPLY_ERROR) {
    std::string text(r->str, r->len);
    freeReplyObject(r);
    throw std::runtime_error(std::string("probe: ") + what + ": " + text);
  }
  return r;
}

}  // namespace

server_probe::server_probe(const std::string& url) {
  timeval timeout{5, 0};
  for (const auto& [host, port] : host_ports(url)) {
    auto* c = redisConnectWithTimeout(host.c_str(), port, timeout);
    if (c == nullptr || c->err) {
      std::string why = c ? c->errstr : "out of memory";
      if (c) redisFree(c);
      for (auto& n : nodes_) redisFree(ctx(n.context));
      throw std::runtime_error("probe: cannot connect to " + host + ":" + std::to_string(port) +
                               " (" + url + "): " + why);
    }
    redisSetTimeout(c, timeout);
    nodes_.push_back({host + ":" + std::to_string(port), c});
  }
}

server_probe::~server_probe() {
  for (auto& n : nodes_) redisFree(ctx(n.context));
}

std::string server_probe::info(const node& n, const char* section) {
  auto* r = checked(n.context, redisCommand(ctx(n.context), "INFO %s", section), "INFO");
  std::string text(r->str, r->len);
  freeReplyObject(r);
  return text;
}

double server_probe::cpu_seconds() {
  double sum = 0;
  for (const auto& n : nodes_) {
    auto text = info(n, "cpu");
    sum +=
        std::stod(info_value(text, "used_cpu_user")) + std::stod(info_value(text, "used_cpu_sys"));
  }
  return sum;
}

void server_probe::start() {
  for (const auto& n : nodes_) {
    freeReplyObject(
        checked(n.context, redisCommand(ctx(n.context), "CONFIG RESETSTAT"), "CONFIG RESETSTAT"));
  }
  cpu_at_start_ = cpu_seconds();
  idle_at_start_ = cpu_idle_entries();
}

server_probe::window server_probe::stop() {
  window w;
  w.cpu_halts = halts_between(idle_at_start_, cpu_idle_entries());
  w.cpu_seconds = cpu_seconds() - cpu_at_start_;
  w.nodes = nodes_.size();
  std::vector<std::string> order;  // INFO's order, first node first
  for (const auto& n : nodes_) {
    // Lines look like: cmdstat_evalsha:calls=12,usec=...,...
    auto text = info(n, "commandstats");
    std::int64_t evalsha = 0;
    std::size_t at = 0;
    while ((at = text.find("cmdstat_", at)) != std::string::npos) {
      auto colon = text.find(':', at);
      std::string name = text.substr(at + 8, colon - at - 8);
      auto calls = std::stoll(text.substr(colon + 7));  // ":calls="
      at = colon;
      if (name.starts_with("info") || name.starts_with("config")) continue;
      w.calls += calls;
      if (!w.calls_of.contains(name)) order.push_back(name);
      w.calls_of[name] += calls;
      if (name == "evalsha") evalsha = calls;
    }
    w.evalsha += evalsha;
    if (!w.evalsha_by_node.empty()) w.evalsha_by_node += ',';
    w.evalsha_by_node += n.address + "=" + std::to_string(evalsha);
  }
  for (const auto& name : order) {
    if (!w.per_command.empty()) w.per_command += ',';
    w.per_command += name + "=" + std::to_string(w.calls_of[name]);
  }
  return w;
}

std::int64_t server_probe::dbsize() {
  std::int64_t sum = 0;
  for (const auto& n : nodes_) {
    auto* r = checked(n.context, redisCommand(ctx(n.context), "DBSIZE"), "DBSIZE");
    sum += r->integer;
    freeReplyObject(r);
  }
  return sum;
}

std::int64_t server_probe::connections_received() {
  std::int64_t sum = 0;
  for (const auto& n : nodes_) {
    sum += std::stoll(info_value(info(n, "stats"), "total_connections_received"));
  }
  return sum;
}

}  // namespace relock_bench
