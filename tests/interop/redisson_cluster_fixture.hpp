// SPDX-License-Identifier: Apache-2.0
// What every cluster interop test starts from: the shared test cluster (support/redis_cluster),
// relock settings with its seed URL, and the Redisson driver in cluster mode
// (useClusterServers), once per pairing of a Redisson version and a pub/sub mode that can hear
// each other.
//
// Redisson 3.18.1 only speaks classic pub/sub (SUBSCRIBE/PUBLISH) in a cluster; 4.x speaks
// sharded (SSUBSCRIBE/SPUBLISH) unless its shardedSubscriptionMode is OFF. A waiter only hears
// a release published the same way, so each pairing runs relock in the matching mode.
//
// The pairings, name_on, cluster_subscribers and cluster_setting serve any cluster: the fixture
// below uses them on the shared one, tls_cluster_interop_test.cpp on a TLS cluster of its own.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include <relock/config.hpp>

#include "contention_scenarios.hpp"
#include "redisson_driver.hpp"
#include "support/redis_cluster.hpp"

namespace relock::test {

struct redisson_cluster_peer {
  std::string jar;
  std::string sharded_subscription;  // the driver's --sharded-subscription: "off", "on"
  relock::publish_mode relock_mode;  // what relock must use to hear it and be heard
};

// For gtest's messages: "relock-redisson-driver-3.18.1.jar, sharded subscription off".
inline void PrintTo(const redisson_cluster_peer& p, std::ostream* os) {
  *os << p.jar << ", sharded subscription " << p.sharded_subscription;
}

// Every built driver jar with classic pub/sub (4.x with sharded subscription OFF), and each
// 4.x jar with sharded pub/sub too (its default in a cluster), against relock sharded.
inline std::vector<redisson_cluster_peer> cluster_peers() {
  std::vector<redisson_cluster_peer> peers;
  for (const auto& jar : redisson_driver::jar_params()) {
    peers.push_back({jar, "off", relock::publish_mode::classic});
    if (jar.find("-3.") == std::string::npos) {
      peers.push_back({jar, "on", relock::publish_mode::sharded});
    }
  }
  return peers;
}

// "redisson_3_18_1_classic".
inline std::string cluster_peer_name(const redisson_cluster_peer& p) {
  return redisson_driver::param_name(p.jar) +
         (p.relock_mode == relock::publish_mode::sharded ? "_sharded" : "_classic");
}

// A name with `prefix` whose slot `master` serves.
inline std::string name_on(const redis_cluster& cluster, const cluster_node& master,
                           const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (cluster.owner_of(name).port == master.port) return name;
  }
}

// Subscribers of `channel` over every node in `mode` (PUBSUB NUMSUB counts a classic subscriber
// on the node it subscribed on, SHARDNUMSUB a sharded one on the node that serves the channel's
// slot, replicas included): a subscriber of the other kind would never hear a release published
// in `mode`.
inline long long cluster_subscribers(const redis_cluster& cluster, relock::publish_mode mode,
                                     const std::string& channel) {
  const bool sharded = mode == relock::publish_mode::sharded;
  long long n = 0;
  for (const auto& node : cluster.nodes()) {
    n += cluster.client(node)
             .command({"PUBSUB", sharded ? "SHARDNUMSUB" : "NUMSUB", channel})
             .elements.at(1)
             .integer;
  }
  return n;
}

// Where the contention scenarios find the data in `cluster`: each key on its master, waiters
// counted in `mode`.
inline contention::setting cluster_setting(const redis_cluster& cluster,
                                           relock::publish_mode mode) {
  contention::setting s;
  s.raw_for = [&cluster](const std::string& key) { return cluster.client(cluster.owner_of(key)); };
  s.subscribers = [&cluster, mode](const std::string& channel) {
    return cluster_subscribers(cluster, mode, channel);
  };
  s.place = [&cluster](const std::string& name) {
    return "master " + cluster.owner_of(name).address() + ", lock " + name;
  };
  return s;
}

class redisson_cluster_fixture : public ::testing::TestWithParam<redisson_cluster_peer> {
 protected:
  void SetUp() override {
    redisson_driver::check_jar(GetParam().jar);
    cluster().restore();
  }

  static redis_cluster& cluster() { return shared_cluster(); }

  relock::config settings(std::chrono::milliseconds watchdog = std::chrono::seconds(30)) {
    relock::config c;
    c.url = cluster().seed_url();
    c.watchdog_lease = watchdog;
    c.publish = GetParam().relock_mode;
    return c;
  }

  // Redisson in cluster mode, seeded with every node; `watchdog` is its lockWatchdogTimeout.
  // Its ready line reports the mode it runs with: sharded_subscription().
  redisson_driver java(std::chrono::milliseconds watchdog = std::chrono::seconds(30)) {
    const auto& nodes = cluster().nodes();
    redisson_driver::options o;
    o.watchdog = watchdog;
    for (std::size_t i = 1; i < nodes.size(); ++i) o.cluster_nodes.push_back(nodes[i].address());
    o.sharded_subscription = GetParam().sharded_subscription;
    return redisson_driver(GetParam().jar, "redis://" + nodes.front().address(), std::move(o));
  }

  // A name with `prefix` whose slot `master` serves.
  static std::string name_on(const cluster_node& master, const std::string& prefix) {
    return test::name_on(cluster(), master, prefix);
  }

  // Subscribers of `channel` over every node in this pairing's mode (cluster_subscribers).
  long long subscribers(const std::string& channel) {
    return cluster_subscribers(cluster(), GetParam().relock_mode, channel);
  }

  // The contention scenarios' view of the shared cluster in this pairing's mode.
  contention::setting contention_setting() {
    return cluster_setting(cluster(), GetParam().relock_mode);
  }
};

}  // namespace relock::test
