// SPDX-License-Identifier: Apache-2.0
#include "top_rows.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "cli.hpp"

namespace relock_cli {
namespace {

std::string count_text(const std::optional<std::int64_t>& n) {
  return n ? std::to_string(*n) : "-";
}

// 950 ms -> "0.9s", 75 s -> "1m15s", 2 h -> "2h00m": short, as a column wants it.
std::string lease_text(std::int64_t ms) {
  char text[32];
  const auto s = ms / 1000;
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  }
  return text;
}

// Where a holder runs: "host pid 1234", its address when its name tells no host, or unknown.
std::string process_text(const std::optional<holder_process>& p) {
  if (p && !p->host.empty()) return p->host + " pid " + p->pid;
  if (p && !p->addr.empty()) return p->addr;
  return "unknown";
}

std::string holders_text(const top_object& o) {
  if (o.holders.empty()) return o.lock_family() ? "free" : "-";
  std::string out;
  for (const auto& h : o.holders) {
    if (!out.empty()) out += ", ";
    out += short_owner(h.owner);
    if (h.side != "exclusive") out += " " + h.side;
    out += " " + process_text(h.process);
  }
  return escaped(out);
}

std::string holds_text(const top_object& o) {
  if (o.holders.empty()) return "-";
  std::string out;
  for (const auto& h : o.holders) out += (out.empty() ? "" : ",") + std::to_string(h.holds);
  return out;
}

std::string lease_cell(const top_object& o) {
  if (!o.lock_family() || o.holders.empty()) return "-";
  return o.remaining_lease_ms ? lease_text(*o.remaining_lease_ms) : "never";
}

std::string permits_text(const top_object& o) {
  if (!o.permits && !o.permits_taken) return "-";
  std::string out = count_text(o.permits);
  if (o.permits_taken) out += " (" + std::to_string(*o.permits_taken) + " taken)";
  return out;
}

std::string length_text(const top_object& o) {
  std::string out = count_text(o.length);
  if (o.delayed && *o.delayed > 0) out += " (+" + std::to_string(*o.delayed) + " delayed)";
  return out;
}

std::int64_t waiting(const top_object& o) {
  return o.waiters.value_or(0) + o.subscribers.value_or(0);
}

std::int64_t holds(const top_object& o) {
  std::int64_t n = 0;
  for (const auto& h : o.holders) n += h.holds;
  return n;
}

}  // namespace

bool top_object::lock_family() const {
  return kind == "lock" || kind == "fair" || kind == "fenced" || kind == "read-write";
}

const std::vector<std::string>& sort_keys() {
  static const std::vector<std::string> keys{"name", "kind", "holders", "waiters", "lease"};
  return keys;
}

std::string next_sort_key(const std::string& key) {
  const auto& keys = sort_keys();
  const auto at = std::find(keys.begin(), keys.end(), key);
  return at == keys.end() || at + 1 == keys.end() ? keys.front() : *(at + 1);
}

void sort_objects(std::vector<top_object>& objects, const std::string& key) {
  // What each order compares first; a negated count sorts most first. The name settles every
  // tie, so that rows stay put between refreshes.
  using rank = std::tuple<std::string, std::int64_t, std::int64_t>;
  const auto rank_of = [&key](const top_object& o) -> rank {
    if (key == "kind") return {o.kind, 0, 0};
    if (key == "holders") return {"", -static_cast<std::int64_t>(o.holders.size()), -holds(o)};
    if (key == "waiters") return {"", -waiting(o), 0};
    if (key == "lease") {
      // The least left first, then held without expiry, then what holds nothing.
      const bool held = o.lock_family() && !o.holders.empty();
      return {"", !held ? 2 : o.remaining_lease_ms ? 0 : 1, o.remaining_lease_ms.value_or(0)};
    }
    return {};
  };
  std::stable_sort(objects.begin(), objects.end(), [&](const top_object& a, const top_object& b) {
    const auto ra = rank_of(a), rb = rank_of(b);
    return ra != rb ? ra < rb : a.name < b.name;
  });
}

const std::vector<std::string>& column_titles() {
  static const std::vector<std::string> titles{"NAME",    "KIND", "HOLDERS", "HOLDS",  "LEASE",
                                               "WAITERS", "SUBS", "PERMITS", "LENGTH", "NODE"};
  return titles;
}

std::vector<std::string> cells_of(const top_object& o) {
  return {escaped(o.name),
          o.kind,
          holders_text(o),
          holds_text(o),
          lease_cell(o),
          count_text(o.waiters),
          count_text(o.subscribers),
          permits_text(o),
          length_text(o),
          o.node};
}

std::string short_owner(const std::string& owner) {
  const auto colon = owner.rfind(':');
  if (colon == std::string::npos) return owner.substr(0, 8);
  return owner.substr(0, std::min<std::size_t>(colon, 8)) + owner.substr(colon);
}

}  // namespace relock_cli
