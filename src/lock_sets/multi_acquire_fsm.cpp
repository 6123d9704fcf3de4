// SPDX-License-Identifier: Apache-2.0
#include "lock_sets/multi_acquire_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail::lock_sets {

multi_acquire_fsm::multi_acquire_fsm(std::size_t members, std::optional<time_point> deadline,
                                     bool try_once,
                                     std::optional<std::chrono::milliseconds> wait_cap)
    : book_(members),
      away_(members),
      away_detail_(members),
      deadline_(deadline),
      try_once_(try_once),
      wait_cap_(wait_cap) {}

member_steps multi_acquire_fsm::start(time_point) {
  if (book_.size() == 0) {
    return book_.finish_now({.what = member_step::kind::finish, .acquired = true});
  }
  return burst();
}

member_steps multi_acquire_fsm::burst() {
  phase_ = phase::burst;
  member_steps steps;
  for (std::size_t i = 0; i < book_.size(); ++i) {
    if (book_.at(i) == state::idle) steps.push_back(book_.ask(i, member_step::kind::try_once));
  }
  return steps;
}

member_steps multi_acquire_fsm::on(const member_event& e, time_point now) {
  if (!book_.record(e)) return {};
  if (e.what == member_event::kind::refused) away_[e.member] = {};
  if (e.what == member_event::kind::failed && transient_member_error(e.ec)) {
    away_[e.member] = e.ec;  // its server could not be reached: say so if the wait ends on it
    away_detail_[e.member] = e.detail;
  }
  if (!book_.answered()) return {};
  return decide(now);
}

member_steps multi_acquire_fsm::decide(time_point now) {
  if (book_.ending()) return book_.finish();
  if (book_.error()) {
    return book_.end_with(
        {.what = member_step::kind::finish, .ec = book_.error(), .detail = book_.error_detail()});
  }
  if (book_.all_held()) {
    return book_.finish_now(
        {.what = member_step::kind::finish, .acquired = true, .held = book_.size()});
  }
  const auto left = remaining(now);
  const bool over = left && left->count() <= 0;
  switch (phase_) {
    case phase::burst: {
      std::size_t k = 0;
      while (book_.at(k) == state::held) ++k;  // not all are held
      if (over) return wait_over(k);
      const bool prefix_held = k > 0;  // every member before k is held
      auto steps = book_.release_held([k](std::size_t i) { return i > k; });
      auto wait = left;
      if (prefix_held && wait_cap_ && (!wait || *wait > *wait_cap_)) wait = wait_cap_;
      steps.push_back(book_.ask(k, member_step::kind::wait, wait));
      phase_ = phase::wait;
      waiting_on_ = k;
      return steps;
    }
    case phase::wait:
      if (book_.at(waiting_on_) == state::held) return burst();
      if (over) return wait_over(waiting_on_);
      return restart();  // the cap: give back what is held so it cannot run out, and go again
    case phase::restart:
      return burst();
  }
  return {};
}

member_steps multi_acquire_fsm::wait_over(std::size_t k) {
  // Stuck on k: because its server was away (an error), or because it is held (not acquired).
  if (away_[k]) {
    return book_.end_with(
        {.what = member_step::kind::finish, .ec = away_[k], .detail = away_detail_[k]});
  }
  return book_.end_with({.what = member_step::kind::finish, .detail = "the wait ran out"});
}

member_steps multi_acquire_fsm::restart() {
  auto steps = book_.release_held();
  if (steps.empty()) return burst();
  phase_ = phase::restart;
  return steps;
}

std::optional<std::chrono::milliseconds> multi_acquire_fsm::remaining(time_point now) const {
  if (try_once_) return std::chrono::milliseconds(0);
  if (!deadline_) return std::nullopt;
  return std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now);
}

}  // namespace relock::detail::lock_sets
