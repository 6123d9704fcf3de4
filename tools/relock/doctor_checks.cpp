// SPDX-License-Identifier: Apache-2.0
// relock doctor's judging: see doctor_checks.hpp. The thresholds follow from how relock works:
// it renews a hold every lease/3, a failover silences a master for its timeout, and a lock key
// always carries a TTL.
#include "doctor_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>
#include <sstream>

namespace relock_cli::doctor {
namespace {

using std::chrono::milliseconds;

std::optional<std::int64_t> integer(const std::string& text) {
  std::int64_t n = 0;
  const auto* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || at != end || text.empty()) return std::nullopt;
  return n;
}

const std::string* value_of(const config_read& c, const std::string& name) {
  const auto it = c.values.find(name);
  return it == c.values.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> integer_of(const config_read& c, const std::string& name) {
  const auto* v = value_of(c, name);
  return v != nullptr ? integer(*v) : std::nullopt;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// As redis.conf writes sizes: 104857600 -> "100mb".
std::string bytes_text(std::int64_t n) {
  if (n > 0 && n % (1024LL * 1024 * 1024) == 0) return std::to_string(n >> 30) + "gb";
  if (n > 0 && n % (1024LL * 1024) == 0) return std::to_string(n >> 20) + "mb";
  if (n > 0 && n % 1024 == 0) return std::to_string(n >> 10) + "kb";
  return std::to_string(n) + " bytes";
}

std::string seconds(milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(d.count()) / 1000.0);
  return text;
}

// Whole seconds strictly above `d`: a lease to suggest.
std::int64_t seconds_above(milliseconds d) { return d.count() / 1000 + 1; }

finding make(const char* check, status level, std::string value, std::string why,
             std::string fix = {}) {
  finding f;
  f.check = check;
  f.level = level;
  f.value = std::move(value);
  f.why = std::move(why);
  if (level != status::pass) f.fix = std::move(fix);  // nothing to fix
  return f;
}

// A finding whose figures could not be read: a warning, and how doctor would get to read them.
finding config_unknown(const char* check, const config_read& c, const std::string& names,
                       std::string why) {
  if (starts_with(c.refused, "no answer")) {
    return make(check, status::warn, "unknown (CONFIG GET: " + c.refused + ")", std::move(why),
                "run doctor again once the node answers");
  }
  const std::string fix =
      starts_with(c.refused, "NOPERM")
          ? "ACL SETUSER " + c.user + " +config|get would let doctor read " + names +
                " (or run doctor as an admin user)"
          : "CONFIG is disabled or renamed here (a managed Redis?): read " + names +
                " in the provider's settings, or give doctor a user with +config|get";
  return make(check, status::warn, "unknown (CONFIG refused: " + c.refused + ")", std::move(why),
              fix);
}

// The command an ACL refusal names: "... to run the 'evalsha' command" -> "evalsha".
std::string refused_command(const std::string& detail) {
  const auto run = detail.find("to run the '");
  if (run == std::string::npos) return {};
  const auto from = run + 12;
  const auto to = detail.find('\'', from);
  return to == std::string::npos ? std::string() : detail.substr(from, to - from);
}

enum class refusal_kind { command, key, channel };

// What an ACL refusal is about, by the server's words (NOPERM, or Redis 7.0's inside a script).
refusal_kind kind_of(const std::string& detail) {
  if (!refused_command(detail).empty()) return refusal_kind::command;  // 'keys' is a command
  if (contains(detail, "key")) return refusal_kind::key;
  if (contains(detail, "channel") || contains(detail, "publish")) return refusal_kind::channel;
  return refusal_kind::command;
}

// "lock, fair lock: NOPERM ...; queue: ...": the calls, grouped by the server's words.
std::string grouped(const std::vector<rights_read::refusal>& refusals) {
  std::vector<std::pair<std::string, std::string>> groups;  // detail, calls
  for (const auto& x : refusals) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == x.detail; });
    if (it == groups.end()) {
      groups.emplace_back(x.detail, x.what);
    } else {
      it->second += ", " + x.what;
    }
  }
  std::string out;
  for (const auto& [detail, calls] : groups) {
    out += (out.empty() ? "" : "; ") + calls + ": " + detail;
  }
  return out;
}

const char* readme_acl = "README, \"Least privilege: the ACL rules relock needs\"";
// The README's patterns for the prefix relock-doctor: (its keys and channels): doctor's names.
const char* scratch_rules =
    " ~relock-doctor:* ~redisson_*:relock-doctor:* "
    "~redisson_countdownlatch__channel__{relock-doctor:*"
    " &redisson_*:relock-doctor:* &redisson_countdownlatch__channel__{relock-doctor:*";

}  // namespace

const char* to_string(status s) {
  switch (s) {
    case status::pass:
      return "pass";
    case status::warn:
      return "warn";
    case status::fail:
      return "fail";
  }
  return "?";
}

status worst(const std::vector<finding>& findings) {
  status w = status::pass;
  for (const auto& f : findings) w = std::max(w, f.level);
  return w;
}

finding maxmemory_policy(const config_read& c) {
  constexpr const char* check = "maxmemory-policy";
  const std::string why =
      "Under memory pressure Redis evicts keys as this policy says, and an evicted lock is one "
      "that another client can take while its holder runs on.";
  if (!c.refused.empty()) return config_unknown(check, c, "maxmemory and maxmemory-policy", why);
  const auto* policy = value_of(c, "maxmemory-policy");
  const auto maxmemory = integer_of(c, "maxmemory");
  if (policy == nullptr || !maxmemory) {
    return make(check, status::warn, "unknown (CONFIG GET gave no maxmemory or maxmemory-policy)",
                why, "maxmemory-policy noeviction in redis.conf");
  }
  const std::string limit = " (maxmemory " + bytes_text(*maxmemory) + ")";
  const std::string fix =
      "maxmemory-policy noeviction in redis.conf (CONFIG SET maxmemory-policy noeviction now)";
  if (*maxmemory == 0) {
    return make(check, status::pass,
                "maxmemory 0 (no limit): nothing is evicted, whatever the policy (" + *policy + ")",
                why);
  }
  if (*policy == "noeviction") {
    return make(check, status::pass,
                "noeviction" + limit + ": a full server refuses writes and evicts nothing", why);
  }
  if (starts_with(*policy, "allkeys-")) {
    return make(check, status::fail, *policy + limit,
                "allkeys-* policies evict any key under memory pressure, held locks included: "
                "another client then takes a lock its holder still believes it has.",
                fix);
  }
  if (starts_with(*policy, "volatile-")) {
    return make(check, status::fail, *policy + limit,
                "Lock keys carry a TTL, so volatile-* policies evict them first under memory "
                "pressure: another client then takes a lock its holder still believes it has.",
                fix);
  }
  return make(check, status::warn, *policy + limit + ": a policy doctor does not know", why, fix);
}

finding persistence(const config_read& c) {
  constexpr const char* check = "persistence";
  const std::string why =
      "After a crash Redis remembers only what it wrote to disk: a grant it forgot is a lock "
      "that a second client takes while its holder still runs.";
  if (!c.refused.empty()) return config_unknown(check, c, "appendonly, appendfsync and save", why);
  const auto* aof = value_of(c, "appendonly");
  const auto* fsync = value_of(c, "appendfsync");
  const auto* save = value_of(c, "save");
  if (aof == nullptr || fsync == nullptr || save == nullptr) {
    return make(check, status::warn, "unknown (CONFIG GET gave no appendonly, appendfsync or save)",
                why, "appendonly yes and appendfsync everysec in redis.conf");
  }
  const std::string turn_on = "appendonly yes and appendfsync everysec in redis.conf";
  if (*aof != "yes") {
    if (save->empty()) {
      return make(check, status::warn, "appendonly no, save \"\" (no persistence)",
                  "A restart forgets every lock: other clients then take locks whose holders "
                  "still run.",
                  turn_on);
    }
    return make(check, status::warn, "appendonly no, save \"" + *save + "\" (snapshots only)",
                "A restart goes back to the last snapshot, which misses the locks granted since: "
                "other clients then take locks whose holders still run.",
                turn_on);
  }
  const std::string seen = "appendonly yes, appendfsync " + *fsync;
  if (*fsync == "always") return make(check, status::pass, seen, why);
  if (*fsync == "everysec") {
    return make(check, status::pass, seen + " (a crash may lose the last second of grants)", why);
  }
  if (*fsync == "no") {
    return make(check, status::warn, seen + " (the kernel writes when it likes, often every 30 s)",
                "A crash loses the grants the kernel had not yet written: after the restart those "
                "locks are free while their holders still run.",
                "appendfsync everysec in redis.conf (or always: slower, and safest)");
  }
  return make(check, status::warn, seen + ": a setting doctor does not know", why,
              "appendfsync everysec in redis.conf");
}

finding replicas(const replication_read& r, const config_read& c) {
  constexpr const char* check = "replicas";
  const std::string why =
      "Replication is asynchronous: a failover right after a grant can promote a replica that "
      "never got it, and a second client then takes the lock.";
  if (!r.trouble.empty()) {
    return make(check, status::warn, "unknown (INFO replication: " + r.trouble + ")", why,
                starts_with(r.trouble, "NOPERM")
                    ? "ACL SETUSER " + c.user + " +info (relock needs it too, for its replicas)"
                    : "run doctor again once the node answers");
  }
  const auto n = r.replicas.value_or(0);
  if (n == 0) {
    return make(check, status::pass, "no replicas (and no failover to lose a grant in)", why);
  }
  const std::string count = std::to_string(n) + (n == 1 ? " replica" : " replicas");
  if (!c.refused.empty()) {
    auto f = config_unknown(check, c, "min-replicas-to-write", why);
    f.value = count + ", min-replicas-to-write " + f.value;
    return f;
  }
  const auto min = integer_of(c, "min-replicas-to-write").value_or(0);
  const std::string seen = count + ", min-replicas-to-write " + std::to_string(min);
  if (min >= 1) return make(check, status::pass, seen, why);
  return make(check, status::warn, seen, why,
              "min-replicas-to-write 1 and min-replicas-max-lag 10 in the master's redis.conf, or "
              "replica sync on every client (relock's ?replica_sync=on; auto does it once it sees "
              "the replicas)");
}

finding sentinel_timeouts(const sentinel_read& s, milliseconds lease) {
  constexpr const char* check = "sentinel-down-after";
  const std::string why =
      "Sentinel starts a failover only after down-after-milliseconds of silence and holders "
      "cannot renew until it ends: with a lease no longer than that, their locks expire and are "
      "reported lost.";
  const std::string asked = "SENTINEL MASTER " + s.master_name;
  if (!s.trouble.empty()) {
    return make(check, status::warn, "unknown (" + asked + ": " + s.trouble + ")", why,
                starts_with(s.trouble, "NOPERM")
                    ? "ACL SETUSER <the sentinels' user> +sentinel|master on each sentinel would "
                      "let doctor read it"
                    : "run doctor again once the sentinel answers");
  }
  const auto field = [&](const char* name) -> std::optional<std::int64_t> {
    const auto it = s.fields.find(name);
    return it == s.fields.end() ? std::nullopt : integer(it->second);
  };
  const auto down = field("down-after-milliseconds");
  const auto failover = field("failover-timeout");
  if (!down || !failover) {
    return make(check, status::warn, "unknown (" + asked + " gave no down-after-milliseconds)", why,
                "run doctor again once the sentinel answers");
  }
  const std::string seen = "down-after-milliseconds " + std::to_string(*down) +
                           ", failover-timeout " + std::to_string(*failover) + " (lease " +
                           seconds(lease) + ")";
  if (milliseconds(*down) < lease) return make(check, status::pass, seen, why);
  return make(
      check, status::warn, seen, why,
      "a lease above twice down-after-milliseconds, for the failover itself (--watchdog-timeout " +
          std::to_string(seconds_above(milliseconds(2 * *down))) +
          ", config::watchdog_lease), or sentinel down-after-milliseconds " + s.master_name + " " +
          std::to_string(std::max<std::int64_t>(1, lease.count() / 2)) + " on every sentinel");
}

finding cluster_node_timeout(const config_read& c, milliseconds lease) {
  constexpr const char* check = "cluster-node-timeout";
  const std::string why =
      "A failed master is replaced only after cluster-node-timeout and an election, and its "
      "holders cannot renew until then: with a lease no longer than that, their locks expire "
      "and are reported lost.";
  if (!c.refused.empty()) return config_unknown(check, c, "cluster-node-timeout", why);
  const auto timeout = integer_of(c, "cluster-node-timeout");
  if (!timeout) {
    return make(check, status::warn, "unknown (CONFIG GET gave no cluster-node-timeout)", why,
                "run doctor again once the node answers");
  }
  const std::string seen =
      "cluster-node-timeout " + std::to_string(*timeout) + " ms (lease " + seconds(lease) + ")";
  if (milliseconds(*timeout) < lease) return make(check, status::pass, seen, why);
  return make(check, status::warn, seen, why,
              "a lease above twice cluster-node-timeout (--watchdog-timeout " +
                  std::to_string(seconds_above(milliseconds(2 * *timeout))) +
                  ", config::watchdog_lease), or cluster-node-timeout " +
                  std::to_string(std::max<std::int64_t>(1, lease.count() / 2)) + " on every node");
}

finding acl_rights(const rights_read& r) {
  constexpr const char* check = "acl";
  const std::string why =
      "relock needs its scripts, pub/sub and list commands on every master: "
      "doctor tries them on scratch names.";
  if (!r.trouble.empty()) {
    return make(check, status::warn, "unknown (" + r.trouble + ")", why,
                "run doctor again once CLUSTER SLOTS names this master (after a failover ends)");
  }
  std::vector<rights_read::refusal> commands, keys, channels;
  std::set<std::string> to_allow;
  for (const auto& x : r.refused) {
    switch (kind_of(x.detail)) {
      case refusal_kind::command:
        commands.push_back(x);
        if (!refused_command(x.detail).empty()) to_allow.insert("+" + refused_command(x.detail));
        break;
      case refusal_kind::key:
        keys.push_back(x);
        break;
      case refusal_kind::channel:
        channels.push_back(x);
        break;
    }
  }
  if (!commands.empty()) {
    std::string allow;
    for (const auto& c : to_allow) allow += " " + c;
    return make(check, status::fail, "refused: " + grouped(commands),
                "relock runs every operation as these commands: refused, its locks fail with "
                "errc::no_permission.",
                "ACL SETUSER " + r.user + (allow.empty() ? " <the commands refused>" : allow) +
                    " (" + readme_acl + ", lists every rule relock needs)");
  }
  // Scratch names: the user's patterns may well cover the application's names and not these.
  if (!keys.empty()) {
    return make(
        check, status::warn, "keys refused: " + grouped(keys),
        "This user's key patterns leave out doctor's scratch names (relock-doctor:*), so "
        "its rights could not be tried; locks work if they cover your names and the "
        "names derived from them.",
        "ACL SETUSER " + r.user + scratch_rules + " lets doctor try them (" + readme_acl + ")");
  }
  if (!channels.empty()) {
    return make(check, status::warn, "channels refused: " + grouped(channels),
                "This user may not publish on doctor's scratch names' channels; if it may not on "
                "your names' either (Redis 7 makes users with resetchannels), unlocks fail and "
                "waiters wait for their timers.",
                "ACL SETUSER " + r.user +
                    " &redisson_*:P* &redisson_countdownlatch__channel__{P* for your names' "
                    "prefix P (" +
                    readme_acl + "); to let doctor try them, ACL SETUSER " + r.user +
                    scratch_rules);
  }
  if (!r.subscription_refused.empty()) {
    return make(check, status::warn, "subscription refused: " + r.subscription_refused.front(),
                "Waiters subscribe to hear a release; refused, they wait for their timer (up to "
                "the holder's lease) instead of taking the lock at once.",
                "ACL SETUSER " + r.user +
                    " +subscribe +ssubscribe &redisson_*:P* for your names' prefix P (" +
                    readme_acl + ")");
  }
  if (!r.failed.empty()) {
    return make(check, status::warn, "could not try: " + grouped(r.failed),
                "doctor tries relock's calls on scratch names, and these failed for another "
                "reason than the ACL rules.",
                "run doctor again; if it fails the same way, the error says why");
  }
  return make(check, status::pass,
              "lock, fair lock, read-write lock, semaphore, count-down latch, queue, pub/sub: "
              "allowed",
              why);
}

finding lua(const lua_read& l) {
  constexpr const char* check = "lua";
  const std::string why =
      "Every lock operation is a Lua script (EVALSHA): without scripting relock cannot lock at "
      "all.";
  if (l.eval_error.empty()) return make(check, status::pass, "EVAL \"return 1\" 0 answered 1", why);
  if (starts_with(l.eval_error, "no answer")) {
    return make(check, status::warn, "unknown (EVAL: " + l.eval_error + ")", why,
                "run doctor again once the node answers");
  }
  if (l.evalsha_error && l.evalsha_error->empty()) {
    return make(
        check, status::pass,
        "EVAL refused (" + l.eval_error + "); SCRIPT LOAD and EVALSHA, what relock sends, answered",
        why);
  }
  std::string seen = "EVAL: " + l.eval_error;
  if (l.evalsha_error) seen += "; EVALSHA: " + *l.evalsha_error;
  const bool acl = starts_with(l.eval_error, "NOPERM") ||
                   (l.evalsha_error && starts_with(*l.evalsha_error, "NOPERM"));
  return make(check, status::fail, seen, why,
              acl ? "ACL SETUSER " + l.user + " +evalsha +script|load"
                  : "a Redis with scripting (EVAL, EVALSHA, SCRIPT LOAD) enabled; on a managed "
                    "Redis, ask the provider");
}

finding busy_reply_threshold(const config_read& c, milliseconds lease) {
  constexpr const char* check = "busy-reply-threshold";
  const auto renewal = lease / 3;
  const std::string why = std::string("While a script runs Redis answers nothing else, and only ") +
                          "past this threshold can it be stopped (SCRIPT KILL): relock renews " +
                          "every lease/3 (" + seconds(renewal) +
                          "), so a longer script makes holds expire.";
  if (!c.refused.empty()) return config_unknown(check, c, "busy-reply-threshold", why);
  // Redis 7 renamed lua-time-limit; older servers know only the old name.
  const char* name =
      value_of(c, "busy-reply-threshold") != nullptr ? "busy-reply-threshold" : "lua-time-limit";
  const auto threshold = integer_of(c, name);
  if (!threshold) {
    return make(check, status::warn, "unknown (CONFIG GET gave no busy-reply-threshold)", why,
                "run doctor again once the node answers");
  }
  const std::string seen = std::string(name) + " " + std::to_string(*threshold) +
                           " ms (relock renews every " + seconds(renewal) + ")";
  const std::string lower = std::string(name) + " " +
                            std::to_string(std::max<std::int64_t>(1, lease.count() / 6)) +
                            " in redis.conf";
  if (*threshold <= 0) {
    return make(check, status::warn,
                std::string(name) + " " + std::to_string(*threshold) +
                    " (no limit: a script may run for ever)",
                why, lower);
  }
  const std::string fix = lower + ", or a lease above 3 x the threshold (--watchdog-timeout " +
                          std::to_string(seconds_above(milliseconds(3 * *threshold))) +
                          ", config::watchdog_lease)";
  if (milliseconds(*threshold) >= renewal) return make(check, status::warn, seen, why, fix);
  return make(check, status::pass, seen, why);
}

finding pubsub_buffer(const config_read& c) {
  constexpr const char* check = "pubsub-buffer";
  const std::string why =
      "A burst of unlock messages past this buffer disconnects the subscriber: waiters miss the "
      "release and fall back to their timers.";
  if (!c.refused.empty()) return config_unknown(check, c, "client-output-buffer-limit", why);
  const auto* limits = value_of(c, "client-output-buffer-limit");
  // "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
  std::istringstream words(limits != nullptr ? *limits : std::string());
  std::string word, hard_text, soft_text, seconds_text;
  while (words >> word && word != "pubsub") {
  }
  words >> hard_text >> soft_text >> seconds_text;
  const auto hard = integer(hard_text), soft = integer(soft_text), period = integer(seconds_text);
  if (word != "pubsub" || !hard || !soft || !period) {
    return make(check, status::warn,
                "unknown (CONFIG GET gave no pubsub client-output-buffer-limit)", why,
                "client-output-buffer-limit pubsub 32mb 8mb 60 in redis.conf");
  }
  const std::string seen = "pubsub hard " + (*hard == 0 ? std::string("none") : bytes_text(*hard)) +
                           ", soft " + (*soft == 0 ? std::string("none") : bytes_text(*soft)) +
                           (*soft == 0 ? "" : " for " + std::to_string(*period) + " s");
  const bool small =
      (*hard > 0 && *hard < pubsub_hard_min) || (*soft > 0 && *soft < pubsub_soft_min);
  if (!small) return make(check, status::pass, seen, why);
  return make(check, status::warn, seen, why,
              "client-output-buffer-limit pubsub 32mb 8mb 60 in redis.conf (Redis's default)");
}

finding clock_skew(const clock_read& c) {
  constexpr const char* check = "clock-skew";
  const std::string why =
      "Fair locks' queue deadlines are written with the clients' clocks, as Redisson does: a "
      "clock off by seconds drops waiters from the queue early or keeps dead ones in it.";
  const std::string fix =
      "keep every client host and Redis node on NTP (chrony or systemd-timesyncd)";
  if (!c.skew) {
    return make(check, status::warn, "unknown (TIME: " + c.trouble + ")", why,
                starts_with(c.trouble, "NOPERM") ? "+time for doctor's user (relock needs it too)"
                                                 : "run doctor again once the node answers");
  }
  const auto us = c.skew->count();
  char seen[96];
  // Under a millisecond is the call's own noise: no direction to speak of.
  std::snprintf(seen, sizeof seen, "%+.1f ms%s", us / 1000.0,
                us >= 1000    ? " (the node ahead of this host)"
                : us <= -1000 ? " (the node behind this host)"
                              : "");
  const auto off = std::chrono::microseconds(us < 0 ? -us : us);
  if (off > skew_fail) return make(check, status::fail, seen, why, fix);
  if (off > skew_warn) return make(check, status::warn, seen, why, fix);
  return make(check, status::pass, seen, why);
}

finding round_trip(const round_trip_read& r, milliseconds lease) {
  constexpr const char* check = "round-trip";
  const std::string why =
      "Every renewal is a round trip, sent every lease/3: round trips near the "
      "lease leave renewals no margin, and holds expire.";
  if (!r.trouble.empty() || r.samples.empty()) {
    return make(check, status::fail, "no answer: " + r.trouble,
                "A master that does not answer can neither grant nor renew its locks.",
                "bring the node back, or check the network between this host and it");
  }
  auto sorted = r.samples;
  std::sort(sorted.begin(), sorted.end());
  const auto median = sorted[sorted.size() / 2];
  char text[64];
  std::snprintf(text, sizeof text, "%.2f ms (median of %zu PINGs)", median.count() / 1000.0,
                sorted.size());
  if (median <= lease / 10) return make(check, status::pass, text, why);
  return make(check, status::warn, text, why,
              "a longer lease (--watchdog-timeout, config::watchdog_lease), or clients nearer to "
              "Redis");
}

}  // namespace relock_cli::doctor
