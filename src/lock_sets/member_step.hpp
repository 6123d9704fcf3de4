// SPDX-License-Identifier: Apache-2.0
// What the composites (multi_lock, red_lock) say to their members, and hear back. Their decisions
// are small machines with no I/O and no clock of their own (multi_acquire_fsm, quorum_fsm); one
// driver (member_set) runs the steps on the members' own async calls and feeds the replies back
// with the time they came. Members are numbered in the composite's order.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace relock::detail::lock_sets {

struct member_step {
  enum class kind {
    try_once,  // one try, no waiting
    wait,      // a try that waits `wait` (for ever when empty) on the member's own wake-ups
    release,   // give the member back
    finish,    // the composite's operation is over: `acquired`, or `ec`
  } what = kind::finish;
  std::size_t member = 0;
  std::optional<std::chrono::milliseconds> wait{};
  bool acquired = false;                  // finish
  std::error_code ec{};                   // finish: why it failed (empty: not acquired)
  std::string detail{};                   // finish: for humans
  std::chrono::milliseconds validity{0};  // finish, acquired, quorum: what is left
  std::size_t held = 0;                   // finish: members held
};

using member_steps = std::vector<member_step>;

struct member_event {
  enum class kind {
    acquired,  // the try or wait took the member
    refused,   // not taken: held elsewhere, or the wait ran out
    failed,    // an error (connection, wrong type, cancelled...)
    released,  // a release was answered (`ec` says how; not_owner and lock_lost count as done)
  } what = kind::refused;
  std::size_t member = 0;
  std::error_code ec{};
  std::string detail{};
};

// An error that says nothing about the member for good: Redis away or slow. The members' own
// waits already ride through these until their deadline.
bool transient_member_error(std::error_code ec);

}  // namespace relock::detail::lock_sets
