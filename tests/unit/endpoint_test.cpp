// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <relock/errors.hpp>

#include <relock/config.hpp>

#include "net/endpoint.hpp"

using relock::net::parse_url;

TEST(parse_url, host_port_and_defaults) {
  auto ep = parse_url("redis://example.org");
  EXPECT_EQ(ep.host, "example.org");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_TRUE(ep.user.empty());
  EXPECT_TRUE(ep.password.empty());
  EXPECT_EQ(parse_url("redis://10.1.2.3:7001").port, 7001);
}

TEST(parse_url, credentials_and_database) {
  auto ep = parse_url("redis://alice:s%40cret@127.0.0.1:6380/3");
  EXPECT_EQ(ep.user, "alice");
  EXPECT_EQ(ep.password, "s@cret");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 3);
  auto password_only = parse_url("redis://:pw@h");
  EXPECT_EQ(password_only.user, "");
  EXPECT_EQ(password_only.password, "pw");
  EXPECT_EQ(parse_url("redis://lonely@h").password, "lonely");
}

TEST(parse_url, ipv6) {
  auto ep = parse_url("redis://[::1]:7000");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.address(), "[::1]:7000");
}

TEST(parse_url, refuses_bad_urls_with_a_reason) {
  for (const char* bad :
       {"http://h", "redis://", "redis://h:0", "redis://h:70000", "redis://h:x", "redis://h/-1",
        "redis://h/x", "redis://[::1", "redis://a%4@h", "redis://127.0.0.1:", "redis://[::1]:"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const relock::error& e) {
      EXPECT_EQ(e.code(), relock::errc::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find(relock::net::redacted_url(bad)), std::string::npos)
          << e.what();
    }
  }
}

TEST(parse_url, never_shows_a_password_in_its_errors) {
  for (const char* bad : {"redis://:s3cret@127.0.0.1:abc", "redis://app:s3cret@h:",
                          "redis://s3cret@h:0", "redis://app:s3cret@h/x", "redis://:s3cret@[::1",
                          "redis://:pa/s3cret@127.0.0.1:abc", "redis://:pa/s3cret@h/x"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const relock::error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
      EXPECT_NE(what.find("***"), std::string::npos) << what;
      // The detail alone: the code's own words are not repeated at the end.
      EXPECT_FALSE(what.ends_with(": invalid argument")) << what;
    }
  }
}

TEST(redacted_url, hides_exactly_the_password) {
  using relock::net::redacted_url;
  EXPECT_EQ(redacted_url("redis://app:pw@h:1/2"), "redis://app:***@h:1/2");
  EXPECT_EQ(redacted_url("redis://:pw@h"), "redis://:***@h");
  EXPECT_EQ(redacted_url("redis://pw@h"), "redis://***@h");
  EXPECT_EQ(redacted_url("redis://h:1"), "redis://h:1");
  EXPECT_EQ(redacted_url("redis://a:b@c@h"), "redis://a:***@h");
  EXPECT_EQ(redacted_url("redis://:pa/ss@h/1"), "redis://:***@h/1");
}

TEST(parse_url, a_password_may_hold_a_slash_or_an_at) {
  auto ep = parse_url("redis://app:pa/s@w@127.0.0.1:6380/2");
  EXPECT_EQ(ep.user, "app");
  EXPECT_EQ(ep.password, "pa/s@w");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 2);
}

namespace {

using relock::net::parse_target;
using relock::net::pubsub_mode;
using relock::net::target;

// The reason a URL is refused, checked to be an invalid_argument that shows the URL redacted.
std::string refusal(const std::string& url) {
  try {
    parse_target(url);
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), relock::errc::invalid_argument) << url;
    const std::string what = e.what();
    EXPECT_NE(what.find(relock::net::redacted_url(url)), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << url << " was accepted";
  return {};
}

}  // namespace

TEST(parse_target, a_single_server) {
  auto t = parse_target("redis://app:pw@example.org:6380/2");
  EXPECT_EQ(t.deployment, target::mode::single);
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].host, "example.org");
  EXPECT_EQ(t.nodes[0].port, 6380);
  EXPECT_EQ(t.nodes[0].db, 2);
  EXPECT_EQ(t.nodes[0].user, "app");
  EXPECT_EQ(t.nodes[0].password, "pw");
  EXPECT_EQ(t.pubsub, std::nullopt);
}

TEST(parse_target, pubsub_option) {
  EXPECT_EQ(parse_target("redis://h?pubsub=auto").pubsub, pubsub_mode::auto_detect);
  EXPECT_EQ(parse_target("redis://h?pubsub=sharded").pubsub, pubsub_mode::sharded);
  EXPECT_EQ(parse_target("redis://h:1/3?pubsub=classic").pubsub, pubsub_mode::classic);
  EXPECT_EQ(parse_target("redis-cluster://h?pubsub=both").pubsub, pubsub_mode::both);
  auto t = parse_target("redis://:pa?ss@h:7/1?pubsub=both");  // a '?' in the password is its own
  EXPECT_EQ(t.nodes[0].password, "pa?ss");
  EXPECT_EQ(t.nodes[0].port, 7);
  EXPECT_EQ(t.nodes[0].db, 1);
  EXPECT_EQ(t.pubsub, pubsub_mode::both);
  // parse_url reads the same URL and leaves the option to parse_target's callers.
  EXPECT_EQ(parse_url("redis://h:7/1?pubsub=classic").db, 1);
}

TEST(parse_target, cluster_seeds) {
  auto t = parse_target("redis-cluster://app:s%40c@h1:7000,h2,[::1]:7002,10.0.0.4:7003");
  EXPECT_EQ(t.deployment, target::mode::cluster);
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].address(), "h1:7000");
  EXPECT_EQ(t.nodes[1].address(), "h2:6379");
  EXPECT_EQ(t.nodes[2].address(), "[::1]:7002");
  EXPECT_EQ(t.nodes[3].address(), "10.0.0.4:7003");
  for (const auto& n : t.nodes) {
    EXPECT_EQ(n.user, "app");
    EXPECT_EQ(n.password, "s@c");
    EXPECT_EQ(n.db, 0);
  }
  EXPECT_EQ(t.pubsub, std::nullopt);

  auto one = parse_target("redis-cluster://127.0.0.1:7101?pubsub=sharded");
  ASSERT_EQ(one.nodes.size(), 1u);
  EXPECT_EQ(one.nodes[0].address(), "127.0.0.1:7101");
  EXPECT_EQ(one.pubsub, pubsub_mode::sharded);

  // A database for every node: Valkey 9's cluster-databases.
  auto numbered = parse_target("redis-cluster://h1:7000,h2/3");
  ASSERT_EQ(numbered.nodes.size(), 2u);
  for (const auto& n : numbered.nodes) EXPECT_EQ(n.db, 3);

  auto repeated = parse_target("redis-cluster://h:1,h:2,h:1,h");
  ASSERT_EQ(repeated.nodes.size(), 3u);
  EXPECT_EQ(repeated.nodes[2].address(), "h:6379");
}

TEST(parse_target, refuses_bad_urls_with_a_reason) {
  struct row {
    const char* url;
    const char* says;
  };
  const row rows[] = {
      {"http://h", "redis://, redis-cluster:// or redis-sentinel://"},
      {"redis-sentinel://h1,h2", "no master name"},
      {"redis-sentinel://h1,h2/", "no master name"},
      {"redis-sentinel://h1//0", "no master name"},
      {"redis-sentinel://h1,,h2/m", "empty host"},
      {"redis-sentinel://h1/m/x", "database 'x'"},
      {"redis-sentinel://h1/m?replica_sync=maybe", "auto, on or off, not 'maybe'"},
      {"rediss-sentinel://h1/m?tls=maybe", "both, sentinels or data, not 'maybe'"},
      {"redis-sentinel://h1/m?tls=data", "need a rediss scheme"},
      {"redis-sentinel://h1/m?tls=sentinels", "need a rediss scheme"},
      {"redis://h?replicas=", "empty host in replicas="},
      {"redis://h?replicas=a:1,,b", "empty host in replicas="},
      {"redis://h?replicas=a:x", "port 'x'"},
      {"redis-sentinel://h1/m?replicas=a:1", "replicas= is for a redis:// URL"},
      {"redis-cluster://h1?replicas=a:1", "replicas= is for a redis:// URL"},
      {"redis-cluster://", "empty host"},
      {"redis-cluster://h1,", "empty host"},
      {"redis-cluster://,h1", "empty host"},
      {"redis-cluster://h1,,h2", "empty host"},
      {"redis-cluster://h1:0,h2", "port 0"},
      {"redis-cluster://h1,h2:x", "port 'x'"},
      {"redis-cluster://h1,h2:", "empty port"},
      {"redis-cluster://h1,[::1", "unclosed ["},
      {"redis://h1,h2", "redis-cluster://"},
      {"redis://h?pubsub=fast", "auto, sharded, classic or both, not 'fast'"},
      {"redis://h?pubsub", "not ''"},
      {"redis://h?pubsub=", "not ''"},
      {"redis://h?", "unknown option ''"},
      {"redis://h?mode=classic", "unknown option 'mode'"},
      {"redis://h?pubsub=classic&", "unknown option ''"},
      {"redis://h?pubsub=classic&pubsub=sharded", "twice"},
      {"redis-cluster://h?PUBSUB=classic", "unknown option"},
      {"redis://h?tls_ca=/ca.pem", "need a rediss scheme"},
      {"redis-cluster://h1?tls_server_name=x", "need a rediss scheme"},
      {"rediss://h?tls_cert=/c.pem", "tls_cert and tls_key go together"},
      {"rediss://h?tls_key=/k.pem", "tls_cert and tls_key go together"},
      {"rediss://h?tls_ca=", "empty tls_ca="},
      {"rediss://h?tls_ca=a&tls_ca=b", "tls_ca given twice"},
      {"rediss://h?tls=data", "rediss-sentinel:// only"},
      {"redisss://h", "must start with redis://"},
      {"rediss:/h", "must start with redis://"},
  };
  for (const auto& r : rows) {
    EXPECT_NE(refusal(r.url).find(r.says), std::string::npos) << r.url << " -> " << refusal(r.url);
  }
}

TEST(parse_target, sentinel_urls) {
  auto t = parse_target(
      "redis-sentinel://app:s%40cret@10.0.0.1:26380,10.0.0.2,[::1]:5/my%20master/2"
      "?replica_sync=on&pubsub=classic");
  EXPECT_EQ(t.deployment, target::mode::sentinel);
  EXPECT_EQ(t.master_name, "my master");
  ASSERT_EQ(t.nodes.size(), 3u);
  // A sentinel's port defaults to Sentinel's own, 26379.
  EXPECT_EQ(t.nodes[0].address(), "10.0.0.1:26380");
  EXPECT_EQ(t.nodes[1].address(), "10.0.0.2:26379");
  EXPECT_EQ(t.nodes[2].address(), "[::1]:5");
  // The URL's credentials and database are the data nodes'.
  EXPECT_EQ(t.nodes[0].user, "app");
  EXPECT_EQ(t.nodes[0].password, "s@cret");
  EXPECT_EQ(t.nodes[0].db, 2);
  EXPECT_EQ(t.replica_sync, relock::replica_sync_mode::on);
  EXPECT_EQ(t.pubsub, pubsub_mode::classic);

  EXPECT_EQ(parse_target("redis://h?replica_sync=off").replica_sync,
            relock::replica_sync_mode::off);
  EXPECT_EQ(parse_target("redis://h").replica_sync, std::nullopt);

  auto listed = parse_target("redis://m:6380?replicas=r1:6381,r2&replica_sync=on");
  ASSERT_EQ(listed.replicas.size(), 2u);
  EXPECT_EQ(listed.replicas[0].address(), "r1:6381");
  EXPECT_EQ(listed.replicas[1].address(), "r2:6379");
}

TEST(parse_target, tls_urls) {
  auto one = parse_target(
      "rediss://app:pw@redis.example:6380/1?tls_ca=%2Fetc%2Fca.pem&tls_server_name=redis.internal"
      "&tls_cert=/c.pem&tls_key=/k.pem");
  EXPECT_TRUE(one.tls_data);
  EXPECT_EQ(one.nodes[0].address(), "redis.example:6380");
  EXPECT_EQ(one.nodes[0].db, 1);
  EXPECT_EQ(one.tls_ca, "/etc/ca.pem");
  EXPECT_EQ(one.tls_server_name, "redis.internal");
  EXPECT_EQ(one.tls_cert, "/c.pem");
  EXPECT_EQ(one.tls_key, "/k.pem");
  EXPECT_FALSE(parse_target("redis://h").tls_data);
  EXPECT_EQ(parse_target("redis://h").tls_ca, std::nullopt);

  auto cluster = parse_target("rediss-cluster://h1:7000,h2:7001");
  EXPECT_EQ(cluster.deployment, target::mode::cluster);
  EXPECT_TRUE(cluster.tls_data);
  EXPECT_EQ(cluster.nodes.size(), 2u);

  auto both = parse_target("rediss-sentinel://s1,s2/mymaster");
  EXPECT_EQ(both.deployment, target::mode::sentinel);
  EXPECT_TRUE(both.tls_data && both.tls_sentinels);
  auto data_only = parse_target("rediss-sentinel://s1/m?tls=data");
  EXPECT_TRUE(data_only.tls_data);
  EXPECT_FALSE(data_only.tls_sentinels);
  auto sentinels_only = parse_target("rediss-sentinel://s1/m?tls=sentinels");
  EXPECT_FALSE(sentinels_only.tls_data);
  EXPECT_TRUE(sentinels_only.tls_sentinels);
}

TEST(parse_url, a_cluster_url_is_not_one_server) {
  try {
    parse_url("redis-cluster://h1,h2");
    ADD_FAILURE() << "accepted";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), relock::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("one server"), std::string::npos) << e.what();
  }
}

TEST(parse_target, never_shows_a_password_in_its_errors) {
  for (const char* bad :
       {"redis-cluster://:s3cret@h1,h2:abc", "redis-cluster://app:s3cret@h1/-1",
        "redis-cluster://app:s3cret@h1,,h2", "rediss-cluster://app:s3cret@h1?tls=data",
        "rediss://s3cret@h?tls_key=k", "redis://:s3cret@h?pubsub=x", "redis://app:s3cret@h1,h2",
        "redis-cluster://app:pa?s3cret@h1?pubsub=x", "redis-cluster://:pa,s3cret@h1,"}) {
    const std::string what = refusal(bad);
    EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
    EXPECT_NE(what.find("***"), std::string::npos) << what;
  }
}

TEST(redacted_url, hides_the_password_of_a_cluster_url) {
  using relock::net::redacted_url;
  EXPECT_EQ(redacted_url("redis-cluster://app:pw@h1:1,h2:2?pubsub=both"),
            "redis-cluster://app:***@h1:1,h2:2?pubsub=both");
  EXPECT_EQ(redacted_url("redis-cluster://pw@h1,[::1]:2"), "redis-cluster://***@h1,[::1]:2");
  EXPECT_EQ(redacted_url("redis-cluster://:p,w@h1,h2"), "redis-cluster://:***@h1,h2");
  EXPECT_EQ(redacted_url("redis-cluster://h1:1,[::1]:2"), "redis-cluster://h1:1,[::1]:2");
  EXPECT_EQ(redacted_url("rediss://app:pw@h"), "rediss://app:***@h");
  EXPECT_EQ(redacted_url("redis://:p?w@h?pubsub=classic"), "redis://:***@h?pubsub=classic");
}

TEST(parse_target, the_cluster_form_of_a_config_is_a_cluster_url_of_its_seeds) {
  auto c = relock::config::for_cluster({"10.0.0.1:7000", "10.0.0.2:7001"});
  EXPECT_EQ(c.url, "redis-cluster://10.0.0.1:7000,10.0.0.2:7001");
  auto t = relock::net::parse_target(c.url);
  EXPECT_EQ(t.deployment, relock::net::target::mode::cluster);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[1].port, 7001);
}
