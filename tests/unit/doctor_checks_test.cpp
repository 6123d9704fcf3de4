// SPDX-License-Identifier: Apache-2.0
// relock doctor's judging, fed by hand: each check's thresholds and edges, and what a refused
// read turns into, with no server. (tests/cli/cli_doctor_test.cpp runs the real binary.)
#include <gtest/gtest.h>

// tools/relock/doctor_checks.cpp is compiled into this target (tests/CMakeLists.txt).
#include "doctor_checks.hpp"

using namespace std::chrono_literals;
using namespace relock_cli::doctor;

namespace {

config_read config(std::map<std::string, std::string> values) {
  config_read c;
  c.values = std::move(values);
  c.user = "app";
  return c;
}

config_read refused(const std::string& why) {
  config_read c;
  c.refused = why;
  c.user = "app";
  return c;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(doctor_checks, eviction_is_safe_only_without_a_limit_or_with_noeviction) {
  EXPECT_EQ(
      maxmemory_policy(config({{"maxmemory", "0"}, {"maxmemory-policy", "allkeys-lru"}})).level,
      status::pass);
  const auto none =
      maxmemory_policy(config({{"maxmemory", "1024"}, {"maxmemory-policy", "noeviction"}}));
  EXPECT_EQ(none.level, status::pass);
  EXPECT_TRUE(none.fix.empty());
  for (const char* policy : {"allkeys-lru", "allkeys-lfu", "allkeys-random"}) {
    const auto f =
        maxmemory_policy(config({{"maxmemory", "104857600"}, {"maxmemory-policy", policy}}));
    EXPECT_EQ(f.level, status::fail) << policy;
    EXPECT_TRUE(has(f.value, "maxmemory 100mb")) << f.value;
    EXPECT_TRUE(has(f.fix, "maxmemory-policy noeviction")) << f.fix;
  }
  for (const char* policy : {"volatile-lru", "volatile-ttl", "volatile-random", "volatile-lfu"}) {
    const auto f =
        maxmemory_policy(config({{"maxmemory", "1048576"}, {"maxmemory-policy", policy}}));
    EXPECT_EQ(f.level, status::fail) << policy;
    EXPECT_TRUE(has(f.why, "TTL")) << f.why;
  }
  EXPECT_EQ(maxmemory_policy(config({{"maxmemory", "1"}, {"maxmemory-policy", "new-one"}})).level,
            status::warn);
}

TEST(doctor_checks, persistence_wants_an_append_only_file_synced_at_least_each_second) {
  const auto with = [](const char* aof, const char* fsync, const char* save) {
    return persistence(config({{"appendonly", aof}, {"appendfsync", fsync}, {"save", save}}));
  };
  EXPECT_EQ(with("yes", "always", "").level, status::pass);
  const auto everysec = with("yes", "everysec", "");
  EXPECT_EQ(everysec.level, status::pass);
  EXPECT_TRUE(has(everysec.value, "1 s") || has(everysec.value, "second")) << everysec.value;
  EXPECT_EQ(with("yes", "no", "").level, status::warn);
  const auto nothing = with("no", "everysec", "");
  EXPECT_EQ(nothing.level, status::warn);
  EXPECT_TRUE(has(nothing.fix, "appendonly yes")) << nothing.fix;
  // Snapshots miss every grant made since the last one: no better for locks.
  EXPECT_EQ(with("no", "everysec", "3600 1 300 100").level, status::warn);
}

TEST(doctor_checks, replicas_without_min_replicas_to_write_warn) {
  replication_read none{0, ""}, two{2, ""};
  EXPECT_EQ(replicas(none, config({{"min-replicas-to-write", "0"}})).level, status::pass);
  const auto unsafe = replicas(two, config({{"min-replicas-to-write", "0"}}));
  EXPECT_EQ(unsafe.level, status::warn);
  EXPECT_EQ(unsafe.value, "2 replicas, min-replicas-to-write 0");
  EXPECT_TRUE(has(unsafe.fix, "min-replicas-to-write 1") && has(unsafe.fix, "replica_sync=on"));
  EXPECT_EQ(replicas(two, config({{"min-replicas-to-write", "1"}})).level, status::pass);
  EXPECT_EQ(replicas(two, refused("NOPERM no config")).level, status::warn);
  EXPECT_EQ(replicas({std::nullopt, "NOPERM no info"}, config({})).level, status::warn);
}

TEST(doctor_checks, failover_timeouts_warn_from_the_lease_up) {
  sentinel_read s;
  s.master_name = "mymaster";
  s.fields = {{"down-after-milliseconds", "5000"}, {"failover-timeout", "180000"}};
  EXPECT_EQ(sentinel_timeouts(s, 5001ms).level, status::pass);
  const auto at = sentinel_timeouts(s, 5000ms);
  EXPECT_EQ(at.level, status::warn);
  EXPECT_TRUE(has(at.fix, "sentinel down-after-milliseconds mymaster 2500")) << at.fix;
  s.fields.clear();
  s.trouble = "NOPERM this user has no permissions to run the 'sentinel|master' command";
  EXPECT_EQ(sentinel_timeouts(s, 30s).level, status::warn);

  EXPECT_EQ(cluster_node_timeout(config({{"cluster-node-timeout", "15000"}}), 30s).level,
            status::pass);
  const auto node = cluster_node_timeout(config({{"cluster-node-timeout", "15000"}}), 15s);
  EXPECT_EQ(node.level, status::warn);
  EXPECT_TRUE(has(node.fix, "cluster-node-timeout 7500")) << node.fix;
}

TEST(doctor_checks, a_refused_command_fails_and_refused_scratch_names_warn) {
  rights_read r;
  r.user = "app";
  EXPECT_EQ(acl_rights(r).level, status::pass);

  r.refused = {{"lock", "NOPERM this user has no permissions to run the 'evalsha' command"},
               {"queue", "NOPERM this user has no permissions to run the 'blpop' command"},
               {"semaphore", "NOPERM this user has no permissions to run the 'evalsha' command"}};
  const auto commands = acl_rights(r);
  EXPECT_EQ(commands.level, status::fail);
  EXPECT_TRUE(has(commands.value, "lock, semaphore: NOPERM")) << commands.value;
  EXPECT_TRUE(has(commands.fix, "ACL SETUSER app +blpop +evalsha")) << commands.fix;
  EXPECT_TRUE(has(commands.fix, "Least privilege")) << commands.fix;

  r.refused = {{"lock",
                "NOPERM this user has no permissions to access one of the keys used as "
                "arguments"}};
  EXPECT_EQ(acl_rights(r).level, status::warn);
  r.refused = {{"lock",
                "ERR The user executing the script can't publish to the channel "
                "mentioned in the command"}};
  const auto channels = acl_rights(r);
  EXPECT_EQ(channels.level, status::warn);
  EXPECT_TRUE(has(channels.value, "channels refused")) << channels.value;

  r.refused.clear();
  r.subscription_refused = {"NOPERM this user has no permissions to access one of the channels"};
  const auto subscription = acl_rights(r);
  EXPECT_EQ(subscription.level, status::warn);
  EXPECT_TRUE(has(subscription.value, "subscription refused")) << subscription.value;
}

TEST(doctor_checks, lua_passes_through_evalsha_when_only_eval_is_refused) {
  EXPECT_EQ(lua({}).level, status::pass);
  lua_read l;
  l.eval_error = "NOPERM this user has no permissions to run the 'eval' command";
  l.evalsha_error = "";
  EXPECT_EQ(lua(l).level, status::pass);
  l.evalsha_error = "NOPERM this user has no permissions to run the 'evalsha' command";
  EXPECT_EQ(lua(l).level, status::fail);
  l.evalsha_error.reset();
  l.eval_error = "ERR unknown command 'EVAL'";
  EXPECT_EQ(lua(l).level, status::fail);
}

TEST(doctor_checks, busy_scripts_warn_from_a_third_of_the_lease) {
  EXPECT_EQ(busy_reply_threshold(config({{"busy-reply-threshold", "5000"}}), 30s).level,
            status::pass);
  EXPECT_EQ(busy_reply_threshold(config({{"busy-reply-threshold", "9999"}}), 30s).level,
            status::pass);
  EXPECT_EQ(busy_reply_threshold(config({{"busy-reply-threshold", "10000"}}), 30s).level,
            status::warn);
  EXPECT_EQ(busy_reply_threshold(config({{"busy-reply-threshold", "0"}}), 30s).level, status::warn);
  // Before Redis 7 it was lua-time-limit.
  const auto old = busy_reply_threshold(config({{"lua-time-limit", "5000"}}), 3s);
  EXPECT_EQ(old.level, status::warn);
  EXPECT_TRUE(has(old.value, "lua-time-limit")) << old.value;
}

TEST(doctor_checks, a_small_pubsub_buffer_warns) {
  const auto with = [](const char* limits) {
    return pubsub_buffer(config({{"client-output-buffer-limit", limits}}));
  };
  const auto fine = with("normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  EXPECT_EQ(fine.level, status::pass);
  EXPECT_EQ(fine.value, "pubsub hard 32mb, soft 8mb for 60 s");
  EXPECT_EQ(with("normal 0 0 0 pubsub 0 0 0").level, status::pass);  // no limit at all
  EXPECT_EQ(with("normal 0 0 0 pubsub 1048576 262144 60").level, status::pass);
  EXPECT_EQ(with("normal 0 0 0 pubsub 1048575 0 0").level, status::warn);
  EXPECT_EQ(with("normal 0 0 0 pubsub 0 262143 60").level, status::warn);
}

TEST(doctor_checks, clock_skew_warns_past_half_a_second_and_fails_past_five) {
  EXPECT_EQ(clock_skew({500'000us, ""}).level, status::pass);
  EXPECT_EQ(clock_skew({-500'001us, ""}).level, status::warn);
  EXPECT_EQ(clock_skew({5'000'000us, ""}).level, status::warn);
  EXPECT_EQ(clock_skew({5'000'001us, ""}).level, status::fail);
  const auto behind = clock_skew({-7'000'000us, ""});
  EXPECT_EQ(behind.level, status::fail);
  EXPECT_TRUE(has(behind.value, "-7000.0 ms (the node behind")) << behind.value;
}

TEST(doctor_checks, the_round_trip_is_the_median_and_warns_above_a_tenth_of_the_lease) {
  round_trip_read r;
  r.samples = {100us, 90'000us, 200us, 300us, 95'000us};
  const auto fine = round_trip(r, 3s);
  EXPECT_EQ(fine.level, status::pass);
  EXPECT_EQ(fine.value, "0.30 ms (median of 5 PINGs)");
  EXPECT_EQ(round_trip(r, 2s).level, status::pass);
  r.samples = {301'000us, 301'000us, 301'000us};
  EXPECT_EQ(round_trip(r, 3s).level, status::warn);
  EXPECT_EQ(round_trip({{}, "connection refused"}, 3s).level, status::fail);
}

TEST(doctor_checks, a_refused_config_read_is_a_warning_that_says_how_to_allow_it) {
  const auto f = maxmemory_policy(
      refused("NOPERM this user has no permissions to run the 'config|get' command"));
  EXPECT_EQ(f.level, status::warn);
  EXPECT_EQ(f.value.rfind("unknown (CONFIG refused: NOPERM", 0), 0u) << f.value;
  EXPECT_TRUE(has(f.fix, "ACL SETUSER app +config|get")) << f.fix;
  // A managed Redis that renamed CONFIG away.
  const auto renamed = persistence(refused("ERR unknown command 'CONFIG'"));
  EXPECT_EQ(renamed.level, status::warn);
  EXPECT_TRUE(has(renamed.fix, "provider")) << renamed.fix;
  for (const auto& g : {busy_reply_threshold(refused("NOPERM"), 30s), pubsub_buffer(refused("x")),
                        cluster_node_timeout(refused("x"), 30s)}) {
    EXPECT_EQ(g.level, status::warn) << g.check;
  }
}

TEST(doctor_checks, the_worst_finding_decides) {
  std::vector<finding> all(3);
  EXPECT_EQ(worst(all), status::pass);
  all[1].level = status::warn;
  EXPECT_EQ(worst(all), status::warn);
  all[0].level = status::fail;
  EXPECT_EQ(worst(all), status::fail);
  EXPECT_EQ(worst({}), status::pass);
}
