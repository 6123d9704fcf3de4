// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson contend over TLS on a Redis Cluster (issue #32): scenarios 1-3
// (contention_scenarios.hpp) with both sides on the TLS ports of a cluster of their own, once per
// pairing of a Redisson version and the pub/sub mode both use (redisson_cluster_fixture.hpp).
//
// The cluster is cluster_tls_test's: 3 masters + 3 replicas with tls-cluster and tls-replication,
// certificates from a throwaway CA that name localhost and not 127.0.0.1, nodes announcing the
// hostname localhost. Started once per process (six TLS nodes are most of the run time), it is
// not the shared plain cluster, so this file is not a cluster_*.cpp.
//
// Both sides verify the CA and the name localhost. relock follows the announced hostname;
// Redisson ignores it and connects to CLUSTER NODES' IPs, so the driver maps each node's
// 127.0.0.1:TLS_PORT to localhost:TLS_PORT (Redisson's natMap) and Redisson's endpoint
// identification stays on. The test's raw clients use the plain ports, and both sides name their
// connections (relock:<id>; Redisson by --client-name), so CLIENT LIST shows where each side is.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <relock/client.hpp>

#include "contention_scenarios.hpp"
#include "redisson_cluster_fixture.hpp"
#include "redisson_driver.hpp"
#include "support/redis_cluster.hpp"
#include "support/tls_client.hpp"
#include "support/tls_cluster.hpp"
#include "support/tls_files.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// What Redisson names its connections here.
const std::string redisson_client_name = "redisson-interop";

// Connections `node` holds on `port` (CLIENT LIST's laddr) whose name starts with `name_prefix`.
int named_clients_on(const redis_cluster& cluster, const cluster_node& node, std::uint16_t port,
                     const std::string& name_prefix) {
  std::istringstream list(cluster.client(node).command({"CLIENT", "LIST"}).str);
  const std::string laddr = "laddr=" + node.host + ":" + std::to_string(port);
  int n = 0;
  for (std::string line; std::getline(list, line);) {
    std::istringstream fields(line);
    bool on_port = false;
    bool named = false;
    for (std::string field; fields >> field;) {
      on_port = on_port || field == laddr;
      named = named || field.starts_with("name=" + name_prefix);
    }
    n += on_port && named;
  }
  return n;
}

class redisson_tls_cluster_interop : public ::testing::TestWithParam<redisson_cluster_peer> {
 protected:
  static void SetUpTestSuite() {
    files_ = std::make_unique<tls_files>();
    cluster_ = std::make_unique<redis_cluster>(relock::test::tls_cluster_by_hostname(*files_));
  }
  static void TearDownTestSuite() {
    cluster_.reset();
    files_.reset();
  }

  void SetUp() override {
    redisson_driver::check_jar(GetParam().jar);
    ASSERT_TRUE(cluster_) << "the TLS cluster did not start";
  }

  static redis_cluster& cluster() { return *cluster_; }

  // relock on the cluster by name at its TLS ports, verified against the test CA.
  relock::config settings() {
    relock::config c;
    c.url = cluster().tls_seed_url("localhost") + "?tls_ca=" + url_path(files_->ca());
    c.publish = GetParam().relock_mode;
    return c;
  }

  // Redisson in cluster mode, seeded with every node by name at its TLS port.
  redisson_driver java() {
    const auto& nodes = cluster().nodes();
    redisson_driver::options o;
    for (const auto& node : nodes) {
      const std::string port = std::to_string(node.tls_port);
      if (&node != &nodes.front()) o.cluster_nodes.push_back("rediss://localhost:" + port);
      o.nat_map[node.host + ":" + port] = "localhost:" + port;
    }
    o.tls_ca_file = files_->ca();
    o.sharded_subscription = GetParam().sharded_subscription;
    o.client_name = redisson_client_name;
    return redisson_driver(GetParam().jar,
                           "rediss://localhost:" + std::to_string(nodes.front().tls_port),
                           std::move(o));
  }

  // Both sides are on the TLS port of the master of `name`, and neither is on any node's plain
  // port, where only the test's raw clients go.
  void expect_both_on_tls(relock::client& client, const std::string& name) {
    (void)client.lock(name).is_locked();  // relock has asked that master something
    const cluster_node master = cluster().owner_of(name);
    SCOPED_TRACE("master " + master.address() + ", TLS port " + std::to_string(master.tls_port));
    EXPECT_GE(named_clients_on(cluster(), master, master.tls_port, "relock:"), 1);
    // Redisson's idle connections to a master: 2 for commands, 1 for subscriptions.
    EXPECT_GE(named_clients_on(cluster(), master, master.tls_port, redisson_client_name), 3);
    for (const auto& node : cluster().nodes()) {
      EXPECT_EQ(named_clients_on(cluster(), node, node.port, "relock:"), 0) << node.address();
      EXPECT_EQ(named_clients_on(cluster(), node, node.port, redisson_client_name), 0)
          << node.address();
    }
  }

  // The contention scenarios' view of this cluster, checking both sides' ports as they go.
  contention::setting contention_setting(relock::client& client) {
    auto s = cluster_setting(cluster(), GetParam().relock_mode);
    s.check_connections = [this, &client](const std::string& name) {
      expect_both_on_tls(client, name);
    };
    return s;
  }

  static inline std::unique_ptr<tls_files> files_;
  static inline std::unique_ptr<redis_cluster> cluster_;
};

}  // namespace

// 1. On each of two masters at once, two relock threads and two Redisson owners increment one
// counter under one lock, every lock operation over TLS: exact counts, no overlapping holds.
TEST_P(redisson_tls_cluster_interop, mutual_exclusion_across_languages_on_two_masters_over_tls) {
  const auto masters = cluster().masters();
  ASSERT_GE(masters.size(), 2u);
  auto j = java();
  relock::client client(settings());
  contention::mutual_exclusion(
      j, client,
      {name_on(cluster(), masters[0], "shared:"), name_on(cluster(), masters[1], "shared:")},
      contention_setting(client));
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message; once with
// the lock on every master.
TEST_P(redisson_tls_cluster_interop, relock_waits_on_a_redisson_hold_and_wakes_over_tls) {
  auto j = java();
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    ASSERT_NO_FATAL_FAILURE(contention::relock_waits_on_a_redisson_hold(
        j, client, name_on(cluster(), master, "j-holds:"), contention_setting(client)));
  }
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock; once
// with the lock on every master.
TEST_P(redisson_tls_cluster_interop, redisson_waits_on_a_relock_hold_and_wakes_over_tls) {
  auto j = java();
  EXPECT_EQ(j.sharded_subscription(), GetParam().sharded_subscription);
  relock::client client(settings());
  for (const auto& master : cluster().masters()) {
    SCOPED_TRACE("master " + master.address());
    ASSERT_NO_FATAL_FAILURE(contention::redisson_waits_on_a_relock_hold(
        j, client, name_on(cluster(), master, "c-holds:"), contention_setting(client)));
  }
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_tls_cluster_interop,
                         ::testing::ValuesIn(cluster_peers()),
                         [](const auto& info) { return cluster_peer_name(info.param); });
