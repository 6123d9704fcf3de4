// SPDX-License-Identifier: Apache-2.0
#include "lock_sets/member_book.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail::lock_sets {

bool transient_member_error(std::error_code ec) {
  return ec == errc::connection || ec == errc::timeout || ec == errc::no_synced_replicas;
}

member_book::member_book(std::size_t members) : members_(members, state::idle) {}

std::size_t member_book::held() const {
  return static_cast<std::size_t>(std::count(members_.begin(), members_.end(), state::held));
}

member_step member_book::ask(std::size_t i, member_step::kind how,
                             std::optional<std::chrono::milliseconds> wait) {
  members_[i] = state::asking;
  ++outstanding_;
  return {.what = how, .member = i, .wait = wait};
}

bool member_book::record(const member_event& e) {
  if (finished_ || e.member >= members_.size() || outstanding_ == 0) return false;
  --outstanding_;
  auto& m = members_[e.member];
  switch (e.what) {
    case member_event::kind::acquired:
      m = state::held;
      break;
    case member_event::kind::refused:
      m = state::idle;
      break;
    case member_event::kind::failed:
      m = state::idle;
      if (!transient_member_error(e.ec) && !error_) {
        error_ = e.ec;
        error_detail_ = e.detail;
      }
      break;
    case member_event::kind::released:
      m = state::idle;
      if (e.ec && e.ec != errc::not_owner && e.ec != errc::lock_lost) {
        release_trouble_ += (release_trouble_.empty() ? "" : "; ") + e.detail;
      }
      break;
  }
  return true;
}

member_steps member_book::end_with(member_step finish_step) {
  ending_step_ = std::move(finish_step);
  ending_ = true;
  auto steps = release_held();
  if (steps.empty()) return finish();
  return steps;
}

member_steps member_book::finish() {
  finished_ = true;
  if (!release_trouble_.empty()) {
    ending_step_.detail +=
        " (a member could not be given back and stays held until its lease "
        "ends: " +
        release_trouble_ + ")";
  }
  return {ending_step_};
}

member_steps member_book::finish_now(member_step finish_step) {
  ending_step_ = std::move(finish_step);
  return finish();
}

}  // namespace relock::detail::lock_sets
