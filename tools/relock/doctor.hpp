// SPDX-License-Identifier: Apache-2.0
// relock doctor's parts: reading each node's figures (doctor_probe.cpp), trying relock's own
// calls on scratch names (doctor_rights.cpp, doctor_scratch.cpp) and the report
// (doctor_report.cpp); doctor_checks.hpp judges what they read.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "doctor_checks.hpp"

namespace relock_cli::doctor {

// What every check of one run shares.
struct run_context {
  std::chrono::milliseconds lease{};  // what timeouts are judged against
  std::string user = "default";       // the URL's ACL user, for fix lines
  bool cluster = false;               // a redis-cluster:// URL
  std::string sentinel_master;        // a redis-sentinel:// URL's master name
};

// Hears the subscriptions servers refused (config::observer of doctor's client), for the acl
// check: its scratch lock's channel names the master's scratch tag.
class refusal_watch : public relock::observer {
 public:
  void on_subscription_refused(const relock::subscription_event& e) override;
  // The servers' words for each refused channel that holds `tag`.
  std::vector<std::string> refused_with(const std::string& tag) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> refused_;  // channel, detail
};

// The acl check's names on one master; empty when none was found (its slots unknown).
struct scratch_names {
  std::string tag;    // a hash tag the master serves: relock-doctor:{TAG}:lock, ...:fair...
  std::string latch;  // relock-doctor:HEX, on the master too: a latch's name cannot carry a tag
                      // of its own in a Cluster (its channel would hash elsewhere, data-layout
                      // §1.2)
};

// The findings of one master: every check but Sentinel's. `holder` is a second client, which
// holds the lock the acl check waits for.
std::vector<finding> examine_master(const relock::client& client, const relock::client& holder,
                                    const refusal_watch& watch, const relock::server_node& node,
                                    const scratch_names& scratch, const run_context& run);
// The findings of one sentinel.
std::vector<finding> examine_sentinel(const relock::client& client, const relock::server_node& node,
                                      const run_context& run);

// relock's calls tried on `scratch`'s names, on the master that serves them, and the scratch
// keys deleted after.
rights_read try_rights(const relock::client& client, const relock::client& holder,
                       const refusal_watch& watch, const relock::server_node& node,
                       const scratch_names& scratch, const std::string& user);

// Random scratch names for each master (by address) that this master serves: in a Cluster,
// whose slots CLUSTER SLOTS gives to it; elsewhere any. A master missing from the map has none
// (its slots could not be read).
std::map<std::string, scratch_names> scratch_for(const relock::client& client,
                                                 const std::vector<relock::server_node>& masters,
                                                 bool cluster);

// The table, each non-pass finding's why and fix, and the worst status last; or one JSON object.
void print_report(const std::vector<finding>& findings, bool json);

}  // namespace relock_cli::doctor
