// SPDX-License-Identifier: Apache-2.0
// What a relock::lock_set holds behind its one pointer: the members, in the order the set
// acquires them, and its rule. Shared by every copy of the set and never changed after it is
// made, so operations read it from any thread.
#pragma once

#include <string>
#include <vector>

#include <relock/lock.hpp>

namespace relock::detail::lock_sets {

// How a set acquires: every member in the canonical order (multi_lock), or a quorum of members
// on independent servers (red_lock).
struct lock_set_rule {
  const char* what;  // names the set in messages: "multi-lock", "red_lock"
  bool quorum = false;
  double drift_factor = 0.01;  // quorum: the servers' clock drift allowance, x the lease
  // quorum: servers of the set that have no member (never reached), by a label; each counts
  // among the servers as a vote never granted.
  std::vector<std::string> unreached{};
};

struct lock_set_state {
  std::vector<mutex> members;
  lock_set_rule rule;
};

}  // namespace relock::detail::lock_sets
