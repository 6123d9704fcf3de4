// SPDX-License-Identifier: Apache-2.0
// Rendering of every result: see output.hpp.
#include "output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "json_values.hpp"

namespace relock_cli {
namespace {

using nlohmann::json;

// Names are bytes and JSON is UTF-8: a byte that is not UTF-8 becomes U+FFFD, where the default
// would throw (and --json status '\xff' ended in a json.exception).
std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

// Unix epoch ms as this host's local time: "2026-11-03 14:03:07 CET".
std::string local_time(std::int64_t epoch_ms) {
  const std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm parts{};
  char text[64];
  if (localtime_r(&t, &parts) == nullptr ||
      std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %Z", &parts) == 0) {
    return std::to_string(epoch_ms) + " ms after the epoch";
  }
  return text;
}

// A waiter's deadline, readable: when, and how far off.
std::string deadline_text(const waiter& w) {
  if (!w.gives_up_at_ms || !w.gives_up_in_ms) return "no deadline";
  const auto left = *w.gives_up_in_ms;
  return "deadline " + local_time(*w.gives_up_at_ms) + ", " +
         (left >= 0 ? "in " + seconds(left / 1000.0) : seconds(-left / 1000.0) + " ago");
}

// When a permit expires: how far off, and when by this host's clock; or never.
std::string expiry_text(const permit& p) {
  if (!p.expires_at_ms || !p.expires_in_ms) return "never";
  const auto left = *p.expires_in_ms;
  if (left < 0) {
    return "expired " + seconds(-left / 1000.0) +
           " ago (taken back at the semaphore's next acquire or release)";
  }
  return "in " + seconds(left / 1000.0) + " (" + local_time(*p.expires_at_ms) + ")";
}

}  // namespace

void print(const lock_status& s, bool as_json) {
  if (as_json) {
    json holders = json::array(), queue = json::array();
    for (const auto& h : s.holders) {
      json entry{{"owner", h.owner}, {"holds", h.holds}, {"side", h.side}, {"process", nullptr}};
      if (h.process) {
        entry["process"] = {
            {"host", h.process->host.empty() ? json(nullptr) : json(h.process->host)},
            {"pid", h.process->pid.empty() ? json(nullptr) : json(h.process->pid)},
            {"addr", h.process->addr}};
      }
      if (h.side == "read") {
        json leases = json::array();
        for (const auto& left : h.read_leases_ms) leases.push_back(or_null(left));
        entry["read_leases_ms"] = leases;
      }
      holders.push_back(std::move(entry));
    }
    for (const auto& w : s.queue) {
      queue.push_back({{"owner", w.owner},
                       {"gives_up_at_ms", or_null(w.gives_up_at_ms)},
                       {"gives_up_in_ms", or_null(w.gives_up_in_ms)}});
    }
    std::cout << dumped(json{{"name", s.name},
                             {"node", s.node},
                             {"server", s.server},
                             {"synced_replicas", s.synced_replicas},
                             {"online_replicas", or_null(s.online_replicas)},
                             {"replicas_acknowledging", or_null(s.replicas_acknowledging)},
                             {"kind", s.kind},
                             {"locked", s.locked},
                             {"remaining_lease_ms", or_null(s.remaining_lease_ms)},
                             {"mode", or_null(s.mode)},
                             {"fencing_token", or_null(s.fencing_token)},
                             {"holders", holders},
                             {"process_lookup_failed", s.process_lookup_failed.empty()
                                                           ? json(nullptr)
                                                           : json(s.process_lookup_failed)},
                             {"queue", queue}})
              << "\n";
    return;
  }
  std::string head =
      s.kind == "none" ? escaped(s.name) +
                             ": nothing there (no key of that name; a lock of it "
                             "is free)"
                       : escaped(s.name) + ": " + (s.locked ? "held" : "free") + ", kind " + s.kind;
  if (s.mode) head += " (" + *s.mode + " mode)";
  if (s.locked) {
    head += ", lease " + (s.remaining_lease_ms ? seconds(*s.remaining_lease_ms / 1000.0) + " left"
                                               : std::string("without expiry"));
  }
  if (s.fencing_token) head += ", last fencing token " + std::to_string(*s.fencing_token);
  std::printf("%s\n", head.c_str());
  std::printf("  node %s (%s)\n", s.node.c_str(), s.server.c_str());
  if (s.synced_replicas > 0) {
    // The master's view: replicas report their offset each second.
    auto count = [](const std::optional<int>& n) { return n ? std::to_string(*n) : "?"; };
    std::printf(
        "  replica sync: lock writes wait for %d replica(s); the master has %s online, %s of them "
        "acknowledged its latest write\n",
        s.synced_replicas, count(s.online_replicas).c_str(),
        count(s.replicas_acknowledging).c_str());
  }
  if (!s.holders.empty()) {
    // Owner fields are "<36-char client id>:<thread id>": 58 columns fit the longest.
    std::printf("  %-58s %-9s %-5s %s\n", "OWNER", "SIDE", "HOLDS", "PROCESS");
    for (const auto& h : s.holders) {
      // Each read hold has its own lease: say what is left of each.
      std::string leases;
      for (const auto& left : h.read_leases_ms) {
        leases += leases.empty() ? "  leases " : ", ";
        leases += left ? seconds(*left / 1000.0) : std::string("expired");
      }
      std::printf("  %-58s %-9s %-5lld %s%s\n", h.owner.c_str(), h.side.c_str(),
                  static_cast<long long>(h.holds), escaped(shown(h.process)).c_str(),
                  leases.c_str());
    }
    if (!s.process_lookup_failed.empty()) {
      std::printf("  (processes unknown: %s; the user needs +client|list)\n",
                  escaped(s.process_lookup_failed).c_str());
    }
  }
  if (!s.queue.empty()) {
    // The deadlines are the waiters' clocks' (data-layout §3); "in" and "ago" are this host's.
    std::printf("  waiting, first in line first (one silent past its deadline is dropped):\n");
    for (std::size_t i = 0; i < s.queue.size(); ++i) {
      const auto& w = s.queue[i];
      std::printf("  %2zu. %-58s %s\n", i + 1, w.owner.c_str(), deadline_text(w).c_str());
    }
  }
  std::fflush(stdout);
}

void print(const counter_status& s, bool as_json) {
  const bool permits = s.kind == "permit-semaphore";
  if (as_json) {
    json out{{"name", s.name}, {"node", s.node}, {"server", s.server}, {"kind", s.kind}};
    if (!permits) {
      out["value"] = or_null(s.value);
    } else {
      json list = json::array();
      for (const auto& p : s.permits) {
        list.push_back({{"id", p.id},
                        {"expires_at_ms", or_null(p.expires_at_ms)},
                        {"expires_in_ms", or_null(p.expires_in_ms)}});
      }
      out["available"] = or_null(s.value);
      out["permits_taken"] = s.permits_taken;
      out["permits"] = std::move(list);
    }
    std::cout << dumped(out) << "\n";
    return;
  }
  if (!permits) {
    std::cout << escaped(s.name) << ": counter, value "
              << (s.value ? std::to_string(*s.value) : "?")
              << " (a semaphore's available permits or a count-down latch's count: the data "
                 "cannot tell which)\n";
    std::cout << "  node " << s.node << " (" << s.server << ")\n";
    return;
  }
  std::cout << escaped(s.name) << ": permit-expirable semaphore, ";
  if (s.value) {
    std::cout << *s.value << (*s.value == 1 ? " permit" : " permits") << " available";
  } else {
    std::cout << "no available count stored (none available)";
  }
  std::cout << ", " << s.permits_taken << " taken\n";
  std::cout << "  node " << s.node << " (" << s.server << ")\n";
  if (!s.permits.empty()) {
    // Ids are 32 hex chars; one of another length (not written by Redisson or relock) still shows.
    const auto column = [](const std::string& text) {
      return text + std::string(text.size() < 32 ? 32 - text.size() : 0, ' ') + " ";
    };
    std::cout << "  " << column("PERMIT") << "EXPIRES\n";
    for (const auto& p : s.permits) std::cout << "  " << column(p.id) << expiry_text(p) << "\n";
  }
  const auto shown = static_cast<std::int64_t>(s.permits.size());
  if (s.permits_taken > shown) {
    std::cout << "  ... and " << s.permits_taken - shown << " more, expiring later\n";
  }
}

void print(const queue_status& s, bool as_json) {
  if (as_json) {
    std::cout << dumped(json{{"name", s.name},
                             {"kind", "queue"},
                             {"length", s.length},
                             {"delayed", s.delayed},
                             {"next_due_ms", or_null(s.next_due_ms)},
                             {"next_due_in_ms", or_null(s.next_due_in_ms)}})
              << "\n";
    return;
  }
  std::cout << escaped(s.name) << ": queue, " << s.length
            << (s.length == 1 ? " element" : " elements") << " ready";
  if (s.delayed > 0) {
    std::cout << "; " << s.delayed << " delayed";
    if (s.next_due_ms && s.next_due_in_ms) {
      const auto in = *s.next_due_in_ms;
      std::cout << ", the next due " << local_time(*s.next_due_ms) << ", "
                << (in >= 0 ? "in " + seconds(in / 1000.0) : seconds(-in / 1000.0) + " ago");
    }
  }
  std::cout << "\n";
}

void print(const unlock_result& r, bool as_json) {
  if (as_json) {
    std::cout << dumped(json{{"name", r.name}, {"released", r.released}}) << "\n";
  } else {
    std::printf("%s: %s\n", escaped(r.name).c_str(), r.released ? "released" : "was not locked");
  }
}

bool write_report(const run_report& r, const std::string& path, std::string& why) {
  json j{{"name", r.name},
         {"outcome", r.outcome},
         {"exit_status", r.exit_status},
         {"waited_seconds", r.waited_seconds},
         {"renewals", r.renewals}};
  j["command_status"] = r.command_status ? json(*r.command_status) : json(nullptr);
  j["held_seconds"] = r.held_seconds ? json(*r.held_seconds) : json(nullptr);
  if (!r.detail.empty()) j["detail"] = r.detail;
  const std::string line = dumped(j) + "\n";
  if (path == "-") {
    std::cerr << line << std::flush;
    return true;
  }
  std::ofstream out(path, std::ios::trunc);
  out << line;
  out.flush();
  if (out) return true;
  why = std::strerror(errno);
  return false;
}

void print(const demo_result& r, bool as_json) {
  if (as_json) {
    std::cout << dumped(json{{"url", r.url},
                             {"private_server", r.private_server},
                             {"node", r.node},
                             {"workers", r.workers},
                             {"iterations", r.iterations},
                             {"count", r.count},
                             {"expected", r.expected},
                             {"seconds", r.seconds},
                             {"acquisitions", r.acquisitions},
                             {"acquisitions_per_s", r.acquisitions / r.seconds},
                             {"handoffs", r.handoffs},
                             {"handoff_p50_us", r.handoff_p50_us},
                             {"handoff_p99_us", r.handoff_p99_us}})
              << "\n";
    return;
  }
  std::printf(
      "%d processes x %d increments of one counter file (read, pause, write) under one "
      "lock, served by %s\n",
      r.workers, r.iterations, r.node.c_str());
  std::printf("count %lld of %lld: %s\n", static_cast<long long>(r.count),
              static_cast<long long>(r.expected),
              r.count == r.expected ? "exact, no increment lost" : "WRONG, increments were lost");
  std::printf(
      "%.0f acquisitions/s (%zu in %.2f s); handoff between processes (%zu): "
      "p50 %.0f us, p99 %.0f us\n",
      r.acquisitions / r.seconds, r.acquisitions, r.seconds, r.handoffs, r.handoff_p50_us,
      r.handoff_p99_us);
  std::fflush(stdout);
}

}  // namespace relock_cli
