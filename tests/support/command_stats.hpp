// SPDX-License-Identifier: Apache-2.0
// How often a server has run each command (INFO commandstats): what a test counts to know that
// a client's tries, releases or publishes have reached Redis, without a MONITOR.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "support/raw_client.hpp"

namespace relock::test {

struct command_count {
  std::int64_t calls = 0;
  std::int64_t failed = 0;  // of those, answered with an error (a NOSCRIPT EVALSHA is both)
};

// Every command the server has run so far, by its lower-case name ("evalsha").
inline std::map<std::string, command_count> command_counts(raw_client& raw) {
  std::map<std::string, command_count> out;
  std::istringstream in(raw.command({"INFO", "commandstats"}).str);
  std::string line;
  while (std::getline(in, line)) {
    // cmdstat_evalsha:calls=12,usec=...,rejected_calls=0,failed_calls=1
    const auto colon = line.find(':');
    const auto calls = line.find(":calls=");
    const auto failed = line.find(",failed_calls=");
    if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos || calls == std::string::npos)
      continue;
    auto& c = out[line.substr(8, colon - 8)];
    c.calls = std::stoll(line.substr(calls + 7));
    if (failed != std::string::npos) c.failed = std::stoll(line.substr(failed + 14));
  }
  return out;
}

// How often the server has run `command` (from clients and from scripts alike).
inline std::int64_t calls_of(raw_client& raw, const std::string& command) {
  const auto all = command_counts(raw);
  const auto it = all.find(command);
  return it == all.end() ? 0 : it->second.calls;
}

// Lua scripts that ran and answered so far (EVAL and EVALSHA; an EVALSHA refused with NOSCRIPT
// is not one): every try and every release of a lock is one.
inline std::int64_t scripts_answered(raw_client& raw) {
  std::int64_t n = 0;
  for (const auto& [command, c] : command_counts(raw)) {
    if (command == "eval" || command == "evalsha") n += c.calls - c.failed;
  }
  return n;
}

}  // namespace relock::test
