// SPDX-License-Identifier: Apache-2.0
// What the cluster tests share: the shared cluster, a client config for it in a pub/sub mode,
// names placed on a chosen master, and who listens on a channel.
#pragma once

#include <string>

#include <relock/config.hpp>

#include "support/error_of.hpp"
#include "support/redis_cluster.hpp"

namespace relock::test {

inline redis_cluster& cluster() { return shared_cluster(); }

// `pubsub`: "" (auto: sharded on Redis 7), "classic" or "sharded".
inline relock::config cluster_settings(const std::string& pubsub = "") {
  relock::config c;
  c.url = cluster().seed_url() + (pubsub.empty() ? "" : "?pubsub=" + pubsub);
  return c;
}

// A name (with `prefix`) whose slot `master` serves.
inline std::string name_on(const cluster_node& master, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (cluster().owner_of(name).port == master.port) return name;
  }
}

// Subscribers of `channel` over every master, classic (NUMSUB) and sharded (SHARDNUMSUB).
inline long long subscribers(const std::string& channel) {
  long long n = 0;
  for (const auto& node : cluster().masters()) {
    auto raw = cluster().client(node);
    n += raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
    n += raw.command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer;
  }
  return n;
}

}  // namespace relock::test
