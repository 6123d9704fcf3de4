// SPDX-License-Identifier: Apache-2.0
// relock doctor as a user meets it: the real binary against real servers, one well configured
// and one misconfigured per finding that a single server can show (eviction, persistence,
// replicas, ACL rights, Lua, busy scripts, pub/sub buffers, a refused CONFIG), each asserting
// that finding's status and the exit status its worst finding gives. Clock skew and the round
// trip cannot be provoked on loopback: they pass, with their figures. Sentinel's and the
// Cluster's timeouts are in cli_sentinel_test.cpp and cli_cluster_test.cpp.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/raw_client.hpp"
#include "support/readme_blocks.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;

namespace {

// Every check doctor makes on a master outside a Cluster, in the report's order.
const std::vector<std::string> master_checks{
    "maxmemory-policy",     "persistence",   "replicas",   "acl",       "lua",
    "busy-reply-threshold", "pubsub-buffer", "clock-skew", "round-trip"};

// What a well-run server has beyond the test servers' defaults: an append-only file.
const std::vector<std::string> durable{"appendonly yes", "appendfsync everysec"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string url_of(const redis_server& server, const std::string& credentials = {}) {
  return "redis://" + (credentials.empty() ? "" : credentials + "@") +
         "127.0.0.1:" + std::to_string(server.port());
}

struct doctor_run {
  int code = -1;
  json report;
  std::string err;

  // The finding of `check` (the one server's); a null JSON when there is none.
  json finding(const std::string& check) const {
    for (const auto& f : report.value("findings", json::array())) {
      if (f["check"] == check) return f;
    }
    return nullptr;
  }
  std::string status(const std::string& check) const {
    const auto f = finding(check);
    return f.is_null() ? "(none)" : f["status"].get<std::string>();
  }
  std::string value(const std::string& check) const {
    const auto f = finding(check);
    return f.is_null() ? "(none)" : f["value"].get<std::string>();
  }
  std::string fix(const std::string& check) const {
    const auto f = finding(check);
    return f.is_null() ? "(none)" : f["fix"].get<std::string>();
  }
};

// relock --url URL --json doctor ARGS...
doctor_run doctor(const std::string& url, std::vector<std::string> args = {}) {
  args.insert(args.begin(), {"--url", url, "--json", "doctor"});
  const auto r = run_cli(args, 60s);
  doctor_run d;
  d.code = r.code;
  d.err = r.err;
  d.report = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(d.report.is_discarded()) << "not JSON: " << r.out << r.err;
  return d;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A server whose user `app` (password app-pw) has `rules`; the default user keeps every right.
redis_server server_with_user(const std::string& rules) {
  return redis_server(
      {.password = "admin-pw", .extra_config = with(durable, {"user app on >app-pw " + rules})});
}

}  // namespace

TEST(cli_doctor, a_well_configured_server_passes_every_check_with_its_figures) {
  redis_server server({.extra_config = durable});
  const auto d = doctor(url_of(server));
  EXPECT_EQ(d.code, 0) << d.report.dump(2) << d.err;
  EXPECT_EQ(d.report["worst"], "pass");
  std::vector<std::string> checks;
  for (const auto& f : d.report["findings"]) {
    checks.push_back(f["check"]);
    EXPECT_EQ(f["node"], "127.0.0.1:" + std::to_string(server.port()));
    EXPECT_EQ(f["status"], "pass") << f.dump();
    EXPECT_FALSE(f["why"].get<std::string>().empty()) << f.dump();
    EXPECT_EQ(f["fix"], "") << f.dump();
  }
  EXPECT_EQ(checks, master_checks);
  EXPECT_TRUE(has(d.value("maxmemory-policy"), "maxmemory 0 (no limit)"));
  EXPECT_TRUE(has(d.value("persistence"), "appendfsync everysec"));
  EXPECT_TRUE(has(d.value("acl"), "allowed"));
  // Loopback has neither skew nor latency to speak of: both pass, each with its figure.
  EXPECT_TRUE(std::regex_match(d.value("clock-skew"), std::regex(R"([+-]\d+\.\d ms.*)")))
      << d.value("clock-skew");
  EXPECT_TRUE(
      std::regex_match(d.value("round-trip"), std::regex(R"(\d+\.\d\d ms \(median of 5 PINGs\))")))
      << d.value("round-trip");

  // The scratch names are gone (an unlock latch may wait for its sweep, or its 20 s TTL).
  auto raw = raw_client::to(server);
  const auto keys = raw.command({"KEYS", "*relock-doctor*"});
  for (const auto& k : keys.elements) {
    EXPECT_EQ(k.str.rfind("redisson_unlock_latch:", 0), 0u) << k.str;
  }
}

TEST(cli_doctor, prints_a_table_then_why_and_fix_then_the_worst) {
  redis_server server({.extra_config = {"maxmemory 100mb", "maxmemory-policy allkeys-lru"}});
  const auto r = run_cli({"--url", url_of(server), "doctor"}, 60s);
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("CHECK", 0), 0u) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nmaxmemory-policy +127\.0\.0\.1:\d+ +fail +)"
                                                  R"(allkeys-lru \(maxmemory 100mb\)\n)")))
      << r.out;
  EXPECT_TRUE(has(r.out, "\nmaxmemory-policy on 127.0.0.1:" + std::to_string(server.port()) +
                             " (fail): allkeys-* policies evict any key"))
      << r.out;
  EXPECT_TRUE(has(r.out, "\n  fix: maxmemory-policy noeviction in redis.conf")) << r.out;
  // Persistence is off on test servers: a warning, also explained.
  EXPECT_TRUE(has(r.out, "\npersistence on 127.0.0.1:")) << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(\nworst: fail \(1 fail, 1 warn, 7 pass\)\n$)")))
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(cli_doctor, an_eviction_policy_that_can_evict_locks_fails) {
  redis_server allkeys(
      {.extra_config = with(durable, {"maxmemory 100mb", "maxmemory-policy allkeys-lru"})});
  const auto a = doctor(url_of(allkeys));
  EXPECT_EQ(a.status("maxmemory-policy"), "fail") << a.report.dump(2);
  EXPECT_EQ(a.code, 3);
  EXPECT_EQ(a.report["worst"], "fail");

  redis_server volatile_lru(
      {.extra_config = with(durable, {"maxmemory 100mb", "maxmemory-policy volatile-lru"})});
  const auto v = doctor(url_of(volatile_lru));
  EXPECT_EQ(v.status("maxmemory-policy"), "fail") << v.report.dump(2);
  EXPECT_TRUE(has(v.finding("maxmemory-policy")["why"], "TTL"));
  EXPECT_EQ(v.code, 3);
}

TEST(cli_doctor, no_persistence_and_appendfsync_no_warn) {
  redis_server none;  // the test servers' default: save "", appendonly no
  const auto n = doctor(url_of(none));
  EXPECT_EQ(n.status("persistence"), "warn") << n.report.dump(2);
  EXPECT_EQ(n.value("persistence"), "appendonly no, save \"\" (no persistence)");
  EXPECT_TRUE(has(n.fix("persistence"), "appendonly yes"));
  EXPECT_EQ(n.code, 1);
  EXPECT_EQ(n.report["worst"], "warn");

  redis_server lazy({.extra_config = {"appendonly yes", "appendfsync no"}});
  const auto l = doctor(url_of(lazy));
  EXPECT_EQ(l.status("persistence"), "warn") << l.report.dump(2);
  EXPECT_TRUE(has(l.fix("persistence"), "appendfsync everysec"));
  EXPECT_EQ(l.code, 1);
}

TEST(cli_doctor, a_replica_without_min_replicas_to_write_warns_and_with_it_passes) {
  for (const bool guarded : {false, true}) {
    SCOPED_TRACE(guarded ? "min-replicas-to-write 1" : "min-replicas-to-write 0");
    redis_server master({.extra_config = with(durable, {"repl-diskless-sync-delay 0",
                                                        guarded ? "min-replicas-to-write 1"
                                                                : "min-replicas-to-write 0"})});
    redis_server replica(
        {.extra_config = {"replicaof 127.0.0.1 " + std::to_string(master.port())}});
    auto raw = raw_client::to(master);
    // Online and acknowledging writes, so that doctor's own lock writes (replica sync) pass.
    ASSERT_TRUE(wait_until(
        [&] {
          raw.command({"SET", "doctor-probe", "1"});
          return raw.command({"WAIT", "1", "100"}).integer == 1;
        },
        30s, 10ms));
    raw.command({"DEL", "doctor-probe"});
    const auto d = doctor(url_of(master));
    EXPECT_EQ(d.status("replicas"), guarded ? "pass" : "warn") << d.report.dump(2);
    EXPECT_EQ(d.value("replicas"),
              std::string("1 replica, min-replicas-to-write ") + (guarded ? "1" : "0"));
    if (!guarded) {
      EXPECT_TRUE(has(d.fix("replicas"), "min-replicas-to-write 1"));
    }
    EXPECT_EQ(d.status("acl"), "pass") << d.report.dump(2);
    EXPECT_EQ(d.code, guarded ? 0 : 1);
  }
}

TEST(cli_doctor, a_user_without_evalsha_fails_the_acl_and_lua_checks) {
  auto server = server_with_user("~* &* +@all -evalsha -eval");
  const auto d = doctor(url_of(server, "app:app-pw"));
  EXPECT_EQ(d.status("acl"), "fail") << d.report.dump(2);
  EXPECT_TRUE(has(d.value("acl"), "lock, fair lock, read-write lock, semaphore")) << d.value("acl");
  EXPECT_TRUE(has(d.value("acl"), "'evalsha'")) << d.value("acl");
  EXPECT_TRUE(has(d.fix("acl"), "ACL SETUSER app +evalsha")) << d.fix("acl");
  EXPECT_TRUE(has(d.fix("acl"), "Least privilege")) << d.fix("acl");
  EXPECT_EQ(d.status("lua"), "fail");
  EXPECT_EQ(d.code, 3);
}

TEST(cli_doctor, a_user_without_channels_warns_that_unlocks_cannot_publish) {
  auto server = server_with_user("~* resetchannels +@all");
  const auto d = doctor(url_of(server, "app:app-pw"));
  EXPECT_EQ(d.status("acl"), "warn") << d.report.dump(2);
  EXPECT_TRUE(has(d.value("acl"), "channels refused")) << d.value("acl");
  EXPECT_TRUE(has(d.finding("acl")["why"], "resetchannels"));
  EXPECT_EQ(d.code, 1);
}

TEST(cli_doctor, a_user_that_may_only_subscribe_to_nothing_hears_its_subscription_refused) {
  // Publishing is allowed on every channel (so unlocks work), subscribing on none.
  auto server = server_with_user("~* &* +@all -subscribe -ssubscribe");
  const auto d = doctor(url_of(server, "app:app-pw"));
  EXPECT_EQ(d.status("acl"), "warn") << d.report.dump(2);
  EXPECT_TRUE(has(d.value("acl"), "subscription refused")) << d.value("acl");
  EXPECT_EQ(d.code, 1);
}

TEST(cli_doctor, the_readmes_least_privilege_user_warns_only_of_what_doctor_cannot_see) {
  // The README's block for the prefix app:, which leaves doctor's scratch names and CONFIG out.
  const std::string rules = readme_acl_rules(0);
  ASSERT_TRUE(has(rules, "+evalsha")) << "README block not found: " << rules;
  auto server = server_with_user(rules);
  const auto d = doctor(url_of(server, "app:app-pw"));
  EXPECT_EQ(d.status("acl"), "warn") << d.report.dump(2);
  EXPECT_TRUE(has(d.value("acl"), "keys refused")) << d.value("acl");
  EXPECT_TRUE(has(d.fix("acl"), "ACL SETUSER app ~relock-doctor:*")) << d.fix("acl");
  // EVAL is not in the block, EVALSHA is: relock's own way passes.
  EXPECT_EQ(d.status("lua"), "pass") << d.value("lua");
  EXPECT_EQ(d.code, 1);
}

TEST(cli_doctor, a_refused_config_get_is_a_warning_naming_the_rule_that_allows_it) {
  auto server = server_with_user("~* &* +@all -config");
  const auto d = doctor(url_of(server, "app:app-pw"));
  for (const char* check :
       {"maxmemory-policy", "persistence", "busy-reply-threshold", "pubsub-buffer"}) {
    SCOPED_TRACE(check);
    EXPECT_EQ(d.status(check), "warn") << d.report.dump(2);
    EXPECT_EQ(d.value(check).rfind("unknown (CONFIG refused: NOPERM", 0), 0u) << d.value(check);
    EXPECT_TRUE(has(d.fix(check), "ACL SETUSER app +config|get")) << d.fix(check);
  }
  EXPECT_EQ(d.status("acl"), "pass");
  EXPECT_EQ(d.code, 1);
}

TEST(cli_doctor, a_busy_reply_threshold_above_a_third_of_the_lease_warns) {
  redis_server server({.extra_config = with(durable, {"busy-reply-threshold 5000"})});
  const auto at_default = doctor(url_of(server));  // the watchdog's 30 s: renewals every 10 s
  EXPECT_EQ(at_default.status("busy-reply-threshold"), "pass") << at_default.report.dump(2);
  const auto short_lease = doctor(url_of(server), {"--lease", "3"});
  EXPECT_EQ(short_lease.status("busy-reply-threshold"), "warn") << short_lease.report.dump(2);
  EXPECT_EQ(short_lease.value("busy-reply-threshold"),
            "busy-reply-threshold 5000 ms (relock renews every 1 s)");
  EXPECT_EQ(short_lease.code, 1);
  // The global --watchdog-timeout is the lease when --lease is not given.
  const auto r = run_cli({"--url", url_of(server), "--json", "--watchdog-timeout", "3", "doctor"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
}

TEST(cli_doctor, a_small_pubsub_output_buffer_warns) {
  redis_server server(
      {.extra_config = with(durable, {"client-output-buffer-limit pubsub 512kb 128kb 60"})});
  const auto d = doctor(url_of(server));
  EXPECT_EQ(d.status("pubsub-buffer"), "warn") << d.report.dump(2);
  EXPECT_EQ(d.value("pubsub-buffer"), "pubsub hard 512kb, soft 128kb for 60 s");
  EXPECT_TRUE(has(d.fix("pubsub-buffer"), "client-output-buffer-limit pubsub 32mb 8mb 60"));
  EXPECT_EQ(d.code, 1);
}

TEST(cli_doctor, bad_flags_and_an_unreachable_redis_are_exit_2) {
  redis_server server;
  const auto bad = run_cli({"--url", url_of(server), "doctor", "--lease", "abc"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "--lease 'abc'")) << bad.err;
  EXPECT_EQ(run_cli({"--url", url_of(server), "doctor", "--lease", "0"}).code, 2);
  EXPECT_EQ(run_cli({"--url", url_of(server), "doctor", "--lease"}).code, 2);
  const auto port = server.port();
  server.stop();
  const auto away = run_cli({"--url", "redis://127.0.0.1:" + std::to_string(port), "doctor"});
  EXPECT_EQ(away.code, 2);
  EXPECT_EQ(away.out, "");
  EXPECT_TRUE(has(away.err, "unreachable")) << away.err;
}
