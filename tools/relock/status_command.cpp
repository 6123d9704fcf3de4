// relock status: who holds NAME, how long its lease has left, and a fair lock's queue.
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "objects/naming.hpp"
#include "redis_reads.hpp"

namespace relock_cli {
namespace {

struct holder {
  std::string owner;
  std::int64_t holds;
};
struct waiter {
  std::string owner;
  std::optional<std::int64_t> gives_up_at_ms;  // absolute, the waiter's clock
};
struct lock_status {
  std::string name;
  std::string kind;
  bool locked = false;
  std::optional<std::int64_t> remaining_lease_ms;  // none: free, or no expiry
  std::vector<holder> holders;
  std::vector<waiter> queue;
};

lock_status read_status(relock::client& client, const std::string& name) {
  using relock::objects::prefixed;
  lock_status s;
  s.name = name;
  s.kind = "lock";
  const std::string type = command(client, {"TYPE", name}).str;
  if (type != "none" && type != "hash") {
    throw failure(exit_usage, "key '" + name + "' holds a " + type + ", not a lock");
  }
  const std::string queue_key = prefixed("redisson_lock_queue", name);
  const std::string timeout_key = prefixed("redisson_lock_timeout", name);
  if (command(client, {"EXISTS", queue_key}).integer == 1) s.kind = "fair";
  if (command(client, {"EXISTS", prefixed("redisson_lock_token", name)}).integer == 1) {
    s.kind = "fenced";
  }
  if (type == "hash") {
    s.locked = true;
    auto fields = command(client, {"HGETALL", name}).elements;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
      if (fields[i].str == "mode") {
        s.kind = "read-write (" + fields[i + 1].str + ")";
        continue;
      }
      s.holders.push_back({fields[i].str, std::stoll(fields[i + 1].str)});
    }
    auto ttl = command(client, {"PTTL", name}).integer;
    if (ttl >= 0) s.remaining_lease_ms = ttl;
  }
  for (auto& owner : command(client, {"LRANGE", queue_key, "0", "-1"}).elements) {
    auto score = command(client, {"ZSCORE", timeout_key, owner.str});
    waiter w{owner.str, std::nullopt};
    if (!score.is_nil()) w.gives_up_at_ms = static_cast<std::int64_t>(std::stod(score.str));
    s.queue.push_back(w);
  }
  return s;
}

std::string seconds(std::int64_t ms) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(ms) / 1000 << " s";
  return out.str();
}

void print_text(const lock_status& s) {
  std::cout << "lock '" << s.name << "': " << (s.locked ? "held" : "free") << ", kind " << s.kind;
  if (s.locked) {
    std::cout << ", lease "
              << (s.remaining_lease_ms ? seconds(*s.remaining_lease_ms) + " left" : "without expiry");
  }
  std::cout << "\n";
  if (!s.holders.empty()) {
    std::cout << "  " << std::left << std::setw(60) << "OWNER" << "HOLDS\n";
    for (const auto& h : s.holders) {
      std::cout << "  " << std::left << std::setw(60) << h.owner << h.holds << "\n";
    }
  }
  if (!s.queue.empty()) {
    std::cout << "queue:\n";
    for (std::size_t i = 0; i < s.queue.size(); ++i) std::cout << "  " << i + 1 << ". " << s.queue[i].owner << "\n";
  }
}

void print_json(const lock_status& s) {
  nlohmann::json j{{"name", s.name}, {"kind", s.kind}, {"locked", s.locked}};
  j["remaining_lease_ms"] = s.remaining_lease_ms ? nlohmann::json(*s.remaining_lease_ms) : nullptr;
  j["holders"] = nlohmann::json::array();
  for (const auto& h : s.holders) j["holders"].push_back({{"owner", h.owner}, {"holds", h.holds}});
  j["queue"] = nlohmann::json::array();
  for (const auto& w : s.queue) {
    j["queue"].push_back({{"owner", w.owner},
                          {"gives_up_at_ms", w.gives_up_at_ms ? nlohmann::json(*w.gives_up_at_ms)
                                                              : nlohmann::json(nullptr)}});
  }
  std::cout << j.dump() << "\n";
}

}  // namespace

int status_command(const global_options& g, const std::string& name) {
  auto client = connect(g, make_config(g));
  client.lock(name);  // the library's checks on the name (empty, too long)
  auto s = read_status(client, name);
  g.json ? print_json(s) : print_text(s);
  return exit_ok;
}

int unlock_command(const global_options& g, const std::string& name, bool force) {
  if (!force) {
    throw failure(exit_usage, "unlock takes --force: a lock belongs to its holder, and relock run "
                              "releases its own; --force takes it away from whoever holds it");
  }
  auto client = connect(g, make_config(g));
  auto lock = client.lock(name);
  const bool released = lock.force_unlock();
  if (g.json) {
    std::cout << nlohmann::json{{"name", name}, {"released", released}}.dump() << "\n";
  } else {
    std::cout << (released ? "released '" + name + "'" : "'" + name + "' was not locked") << "\n";
  }
  return released ? exit_ok : exit_conflict;
}

}  // namespace relock_cli
