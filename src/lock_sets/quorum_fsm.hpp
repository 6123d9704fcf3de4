// SPDX-License-Identifier: Apache-2.0
// red_lock's decisions (docs/design.md, "Composites"), with no I/O and no clock of its own.
//
// An attempt asks every member at once, each with a budget of max(remaining / n, 1 ms) (a
// fixed budget when the wait is unbounded), and waits for every answer. It succeeds when a
// quorum (n/2 + 1) was taken and time is left on the hold: validity = lease - time since the
// attempt began - drift (lease x drift factor + 2 ms, for the servers' clocks running fast).
// Otherwise whatever was taken goes back, and the next attempt starts while the wait lasts.
// A member that fails for good (wrong type, cancelled...) ends it all with its error; Redis
// being away (connection, timeout) only costs that member's vote, and when too few members
// could be reached for a quorum the operation ends with that error instead of "not acquired".
// A server of the set with no member at all (its client could not be made: `unreached`) is a
// vote never granted: it counts in n and in the budgets as a member that is away; with fewer
// members than a quorum, the operation ends at once, asking no one.
// It never finishes unacquired holding a member: every release it sent is answered first.
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

class quorum_fsm {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  struct settings {
    std::size_t members = 0;
    // The set's servers with no member, by a label for messages (their URL): n counts them.
    std::vector<std::string> unreached{};
    std::optional<time_point> deadline{};  // empty: wait for ever
    bool try_once = false;                 // one attempt, 1 ms per member
    std::chrono::milliseconds lease{0};
    double drift_factor = 0.01;
    std::chrono::milliseconds unbounded_budget{1'000};  // per member, when the wait has no end
  };

  explicit quorum_fsm(settings s);

  member_steps start(time_point now);
  member_steps on(const member_event& e, time_point now);

  // Every server of the set: the members and those never reached.
  std::size_t servers() const { return book_.size() + settings_.unreached.size(); }
  std::size_t quorum() const { return servers() / 2 + 1; }
  bool finished() const { return book_.finished(); }

 private:
  enum class phase { attempt, retreat };

  member_steps attempt(time_point now);
  member_steps decide(time_point now);
  member_steps give_up(std::error_code ec, std::string detail);
  member_steps give_up_after_attempt();
  member_steps give_up_unreachable(std::size_t away);
  std::chrono::milliseconds validity(time_point now) const;

  settings settings_;
  member_book book_;
  phase phase_ = phase::attempt;
  time_point attempt_start_{};
  std::size_t unreachable_ = 0;              // members this attempt could not reach
  std::size_t held_in_attempt_ = 0;          // members this attempt took
  std::error_code away_{};                   // how one could not be reached (the last heard)
  std::vector<std::string> away_details_{};  // by member, this attempt: why it was not reached
};

}  // namespace relock::detail::lock_sets
