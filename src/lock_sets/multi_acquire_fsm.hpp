// SPDX-License-Identifier: Apache-2.0
// multi_lock's decisions (docs/design.md, "Composites"), with no I/O and no clock of its own.
//
// Members come in one canonical order (multi_lock sorts them), and the machine keeps one rule:
// it only ever waits on member k while holding members that come before k, never after. Two
// multi-locks over the same members, given in any order, therefore cannot wait on each other
// in a circle (the classic lock-ordering argument), and the one holding the earliest contended
// member always makes progress: no deadlock, no livelock.
//
//   burst: try every member not held, all at once (one round trip when nothing is contended)
//     all held                  -> finish, acquired
//     k = first member not held -> release the held members after k, wait on k (its own
//                                  wake-ups), then burst again
//   the wait runs out           -> release everything, finish not acquired
//   a member fails for good     -> release everything, finish with its error
// An explicit lease also caps a wait on one member at half the lease, so members taken
// earlier cannot run out while it waits: at the cap everything goes back and a burst starts
// again. It never finishes acquired without every member, nor unacquired holding any: a finish
// waits for every release it sent to be answered.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "lock_sets/member_book.hpp"
#include "lock_sets/member_step.hpp"

namespace relock::detail::lock_sets {

class multi_acquire_fsm {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  // `deadline` empty: wait for ever; `try_once`: no waiting at all (try_lock()).
  // `wait_cap`: the longest wait on one member while others are held (empty: none).
  multi_acquire_fsm(std::size_t members, std::optional<time_point> deadline, bool try_once,
                    std::optional<std::chrono::milliseconds> wait_cap);

  member_steps start(time_point now);
  member_steps on(const member_event& e, time_point now);

  bool finished() const { return book_.finished(); }

 private:
  using state = member_book::state;
  enum class phase { burst, wait, restart };

  member_steps burst();
  member_steps decide(time_point now);
  member_steps restart();  // give back what is held, then burst
  member_steps wait_over(std::size_t stuck_on);
  // The time left to wait; nullopt: for ever. Zero or less: the wait is over.
  std::optional<std::chrono::milliseconds> remaining(time_point now) const;

  member_book book_;
  std::vector<std::error_code> away_;  // per member: its last answer was Redis being away
  std::vector<std::string> away_detail_;
  std::optional<time_point> deadline_;
  bool try_once_;
  std::optional<std::chrono::milliseconds> wait_cap_;
  phase phase_ = phase::burst;
  std::size_t waiting_on_ = 0;  // phase::wait: the member waited on
};

}  // namespace relock::detail::lock_sets
