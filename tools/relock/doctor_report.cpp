// SPDX-License-Identifier: Apache-2.0
// relock doctor's report: a table of every finding, then why and how to fix each one that did
// not pass, then the worst status; or, with --json, one object holding them all.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "doctor.hpp"

namespace relock_cli::doctor {
namespace {

// In the order the man page lists the fields.
using json = nlohmann::ordered_json;

void print_json(const std::vector<finding>& findings) {
  json list = json::array();
  for (const auto& f : findings) {
    list.push_back({{"check", f.check},
                    {"node", f.node},
                    {"status", to_string(f.level)},
                    {"value", f.value},
                    {"why", f.why},
                    {"fix", f.fix}});
  }
  const json report{{"findings", std::move(list)}, {"worst", to_string(worst(findings))}};
  // A server's words are bytes: one that is not UTF-8 becomes U+FFFD rather than an exception.
  std::cout << report.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
}

std::string padded(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

}  // namespace

void print_report(const std::vector<finding>& findings, bool as_json) {
  if (as_json) return print_json(findings);
  std::size_t check_width = 5, node_width = 4;
  for (const auto& f : findings) {
    check_width = std::max(check_width, f.check.size());
    node_width = std::max(node_width, f.node.size());
  }
  const auto row = [&](const std::string& check, const std::string& node, const std::string& level,
                       const std::string& value) {
    std::cout << padded(check, check_width) << "  " << padded(node, node_width) << "  "
              << padded(level, 6) << "  " << value << "\n";
  };
  row("CHECK", "NODE", "STATUS", "VALUE");
  int count[3] = {0, 0, 0};
  for (const auto& f : findings) {
    row(f.check, f.node, to_string(f.level), escaped(f.value));
    ++count[static_cast<int>(f.level)];
  }
  bool first = true;
  for (const auto& f : findings) {
    if (f.level == status::pass) continue;
    if (first) std::cout << "\n";
    first = false;
    std::cout << f.check << " on " << f.node << " (" << to_string(f.level) << "): " << f.why
              << "\n  fix: " << escaped(f.fix) << "\n";
  }
  std::cout << "\nworst: " << to_string(worst(findings)) << " (" << count[2] << " fail, "
            << count[1] << " warn, " << count[0] << " pass)\n";
  std::cout.flush();
}

}  // namespace relock_cli::doctor
