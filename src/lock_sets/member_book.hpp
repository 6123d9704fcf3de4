// SPDX-License-Identifier: Apache-2.0
// What both lock-set machines (multi_acquire_fsm, quorum_fsm) keep of their members: each one's
// state, how many steps are out and not answered, the first failure for good, and the ending
// (every held member released, then the finish, with any release that failed named in it).
// No I/O, no clock.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "lock_sets/member_step.hpp"

namespace relock::detail::lock_sets {

class member_book {
 public:
  enum class state { idle, asking, held, releasing };

  explicit member_book(std::size_t members);

  std::size_t size() const { return members_.size(); }
  state at(std::size_t i) const { return members_[i]; }
  std::size_t held() const;
  bool all_held() const { return held() == members_.size(); }

  // A step that asks member i (try_once or wait); counted as out until answered.
  member_step ask(std::size_t i, member_step::kind how,
                  std::optional<std::chrono::milliseconds> wait = std::nullopt);
  // Releases every held member for which `which(i)` is true (every one by default).
  template <class Which>
  member_steps release_held(Which which);
  member_steps release_held() {
    return release_held([](std::size_t) { return true; });
  }

  // Takes in an answer; false when it is stale (finished, unknown member, nothing out). A
  // failure for good (not transient_member_error) is kept as the first error; transient ones
  // are the machine's to weigh.
  bool record(const member_event& e);
  bool answered() const { return outstanding_ == 0; }
  std::error_code error() const { return error_; }
  const std::string& error_detail() const { return error_detail_; }

  // Ends the operation with `finish` once every held member is released: returns the
  // releases, or the finish itself when nothing is held.
  member_steps end_with(member_step finish);
  bool ending() const { return ending_; }
  // Once the ending's releases are answered: the finish.
  member_steps finish();
  // Ends at once, nothing held (acquired, or nothing to give back).
  member_steps finish_now(member_step finish);
  bool finished() const { return finished_; }

 private:
  std::vector<state> members_;
  std::size_t outstanding_ = 0;
  std::error_code error_{};
  std::string error_detail_{};
  std::string release_trouble_{};  // releases that failed, for the finish's detail
  member_step ending_step_{};
  bool ending_ = false;
  bool finished_ = false;
};

template <class Which>
member_steps member_book::release_held(Which which) {
  member_steps steps;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i] != state::held || !which(i)) continue;
    members_[i] = state::releasing;
    ++outstanding_;
    steps.push_back({.what = member_step::kind::release, .member = i});
  }
  return steps;
}

}  // namespace relock::detail::lock_sets
