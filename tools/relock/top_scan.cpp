// SPDX-License-Identifier: Apache-2.0
#include "top_scan.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <set>

#include "top_names.hpp"

namespace relock_cli {
namespace {

// Every key on `node` that SCAN MATCH `match` returns, page by page.
void scan(const relock::client& client, const relock::server_node& node, const std::string& match,
          const std::function<void(const std::string&)>& each) {
  std::string cursor = "0";
  do {
    const auto reply = client.call(node, {"SCAN", cursor, "MATCH", match, "COUNT", "1000"});
    if (reply.is_error()) {
      throw relock::error(relock::errc::server_error,
                          "SCAN refused by " + node.address + ": " + reply.text);
    }
    if (reply.elements.size() != 2) {
      throw relock::error(relock::errc::server_error,
                          "SCAN on " + node.address + ": a reply that is no cursor and page");
    }
    cursor = reply.elements[0].text;
    for (const auto& key : reply.elements[1].elements) each(key.text);
  } while (cursor != "0");
}

// The name matches as SCAN MATCH would have matched a key of that name. fnmatch(3) reads Redis's
// glob alike (*, ?, [...], [^...], \); it also takes [!...] for [^...].
bool matches(const std::string& pattern, const std::string& name) {
  return pattern == "*" || fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace

std::vector<std::string> find_objects(const relock::client& client,
                                      const std::vector<relock::server_node>& masters,
                                      const std::string& pattern) {
  std::set<std::string> own;      // names whose own key is there
  std::set<std::string> derived;  // names only an auxiliary key shows
  const auto found = [&](const std::string& key) {
    auto owner = object_of(key);
    if (!owner.auxiliary) {
      own.insert(key);
    } else if (matches(pattern, owner.name)) {
      derived.insert(std::move(owner.name));
    }
  };
  for (const auto& node : masters) {
    scan(client, node, pattern, found);
    if (pattern == "*") continue;
    scan(client, node, "redisson_*", [&](const std::string& key) {
      if (object_of(key).auxiliary) found(key);
    });
  }
  std::vector<std::string> names(own.begin(), own.end());
  for (const auto& name : derived) {
    if (own.contains(name)) continue;
    // "{x}" derives the same keys as "x" (data-layout §1.2): when the key "{x}" is there and "x"
    // is not, they are "{x}"'s.
    if (own.contains("{" + name + "}")) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace relock_cli
