// SPDX-License-Identifier: Apache-2.0
// A numbered database in a cluster URL (redis-cluster://.../1): every connection selects it, so
// a server without databases in cluster mode (Redis Cluster; Valkey with cluster-databases 1)
// refuses the client at its start, in the server's words, and nothing is half-made.
#include <gtest/gtest.h>

#include <relock/client.hpp>

#include "cluster_env.hpp"
#include "support/redis_cluster.hpp"

using namespace relock::test;

TEST(cluster_database, a_database_the_cluster_has_not_is_refused_at_start_in_its_words) {
  cluster().restore();
  relock::config c = cluster_settings();
  c.url += "/1";
  try {
    relock::client refused(c);
    FAIL() << "a cluster without databases accepted SELECT 1";
  } catch (const relock::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SELECT 1"), std::string::npos) << what;
  }
}
