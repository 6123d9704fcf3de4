// SPDX-License-Identifier: Apache-2.0
// relock doctor's judging: from the figures read off a node to a finding (pass, warn or fail,
// with why it matters and the fix). No I/O and nothing of relock's: doctor_probe.cpp reads the
// figures, tests/unit/doctor_checks_test.cpp feeds them by hand.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relock_cli::doctor {

enum class status { pass, warn, fail };  // in this order: worse is greater
const char* to_string(status s);

struct finding {
  std::string check;  // "maxmemory-policy", "persistence"...: stable ids, for scripts
  std::string node;   // host:port
  status level = status::pass;
  std::string value;  // what was seen, in words and figures
  std::string why;    // why the check matters, one sentence
  std::string fix;    // one sentence with the config line that fixes it; empty for a pass
};

// The worst level of `findings` (pass for none).
status worst(const std::vector<finding>& findings);

// What CONFIG GET * said on one node.
struct config_read {
  std::map<std::string, std::string> values;
  // Why there are no values: the server's error ("NOPERM ...", "ERR unknown command 'CONFIG'")
  // or no answer. Empty: read.
  std::string refused;
  std::string user = "default";  // the ACL user doctor runs as, for fix lines
};

// INFO replication's connected_slaves; or why it is unknown.
struct replication_read {
  std::optional<std::int64_t> replicas;
  std::string trouble;
};

// SENTINEL MASTER <name> on one sentinel: its field/value pairs; or why none.
struct sentinel_read {
  std::string master_name;
  std::map<std::string, std::string> fields;
  std::string trouble;
};

// What the relock calls doctor made on scratch names did (doctor_rights.cpp).
struct rights_read {
  struct refusal {
    std::string what;    // "lock", "semaphore"...
    std::string detail;  // the server's words
  };
  std::vector<refusal> refused;                   // errc::no_permission
  std::vector<refusal> failed;                    // any other error
  std::vector<std::string> subscription_refused;  // the server's words, per refused subscription
  std::string trouble;                            // nothing could be tried: why
  std::string user = "default";
};

// EVAL "return 1" 0; and, when EVAL is refused by the ACL rules, what relock itself sends
// (SCRIPT LOAD, EVALSHA).
struct lua_read {
  std::string eval_error;                    // empty: EVAL answered
  std::optional<std::string> evalsha_error;  // set when tried: empty, it answered
  std::string user = "default";
};

// TIME on the node against this host's clock at the midpoint of the call.
struct clock_read {
  std::optional<std::chrono::microseconds> skew;  // node minus this host; > 0: node ahead
  std::string trouble;
};

// PINGs through client::call: their round trips.
struct round_trip_read {
  std::vector<std::chrono::microseconds> samples;
  std::string trouble;  // the node did not answer: why
};

// The checks, one per function, in the order the report lists them.
finding maxmemory_policy(const config_read& c);
finding persistence(const config_read& c);
finding replicas(const replication_read& r, const config_read& c);
finding sentinel_timeouts(const sentinel_read& s, std::chrono::milliseconds lease);
finding cluster_node_timeout(const config_read& c, std::chrono::milliseconds lease);
finding acl_rights(const rights_read& r);
finding lua(const lua_read& l);
finding busy_reply_threshold(const config_read& c, std::chrono::milliseconds lease);
finding pubsub_buffer(const config_read& c);
finding clock_skew(const clock_read& c);
finding round_trip(const round_trip_read& r, std::chrono::milliseconds lease);

// Thresholds, named for the tests and the man page.
constexpr std::chrono::milliseconds skew_warn{500};
constexpr std::chrono::milliseconds skew_fail{5'000};
constexpr std::int64_t pubsub_hard_min = 1024 * 1024;  // bytes
constexpr std::int64_t pubsub_soft_min = 256 * 1024;

}  // namespace relock_cli::doctor
