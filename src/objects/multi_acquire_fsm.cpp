#include "objects/multi_acquire_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail {

bool transient_member_error(std::error_code ec) {
  return ec == errc::connection || ec == errc::timeout || ec == errc::no_synced_replicas;
}

multi_acquire_fsm::multi_acquire_fsm(std::size_t members, std::optional<time_point> deadline,
                                     bool try_once,
                                     std::optional<std::chrono::milliseconds> wait_cap)
    : members_(members, state::idle),
      away_(members),
      away_detail_(members),
      deadline_(deadline),
      try_once_(try_once),
      wait_cap_(wait_cap) {}

member_steps multi_acquire_fsm::start(time_point) {
  if (members_.empty()) {
    finished_ = true;
    return {member_step{.what = member_step::kind::finish, .acquired = true}};
  }
  return burst();
}

member_steps multi_acquire_fsm::burst() {
  phase_ = phase::burst;
  member_steps steps;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i] != state::idle) continue;
    members_[i] = state::asking;
    steps.push_back({.what = member_step::kind::try_once, .member = i});
  }
  outstanding_ = steps.size();
  return steps;
}

member_steps multi_acquire_fsm::on(const member_event& e, time_point now) {
  if (finished_ || e.member >= members_.size() || outstanding_ == 0) return {};
  --outstanding_;
  auto& m = members_[e.member];
  switch (e.what) {
    case member_event::kind::acquired:
      m = state::held;
      break;
    case member_event::kind::refused:
      m = state::idle;
      away_[e.member] = {};
      break;
    case member_event::kind::failed:
      m = state::idle;
      if (!transient_member_error(e.ec)) {
        if (!error_) {
          error_ = e.ec;
          detail_ = e.detail;
        }
      } else {
        away_[e.member] = e.ec;  // its server could not be reached: say so if the wait ends
        away_detail_[e.member] = e.detail;
      }
      break;
    case member_event::kind::released:
      m = state::idle;
      if (e.ec && e.ec != errc::not_owner && e.ec != errc::lock_lost) {
        release_trouble_ += (release_trouble_.empty() ? "" : "; ") + e.detail;
      }
      break;
  }
  if (outstanding_ > 0) return {};
  return decide(now);
}

member_steps multi_acquire_fsm::decide(time_point now) {
  if (phase_ == phase::ending) {
    finished_ = true;
    if (!release_trouble_.empty()) {
      ending_step_.detail +=
          " (a member could not be given back and stays held until its "
          "lease ends: " +
          release_trouble_ + ")";
    }
    return {ending_step_};
  }
  if (error_) return release_all_then_finish(error_, detail_);
  if (std::all_of(members_.begin(), members_.end(), [](state s) { return s == state::held; })) {
    finished_ = true;
    return {
        member_step{.what = member_step::kind::finish, .acquired = true, .held = members_.size()}};
  }
  const auto left = remaining(now);
  const bool over = left && left->count() <= 0;
  switch (phase_) {
    case phase::burst: {
      const std::size_t k = static_cast<std::size_t>(
          std::find_if(members_.begin(), members_.end(), [](state s) { return s != state::held; }) -
          members_.begin());
      if (over) return wait_over(k);
      member_steps steps;
      bool prefix_held = false;
      for (std::size_t i = 0; i < members_.size(); ++i) {
        if (members_[i] != state::held) continue;
        if (i < k) {
          prefix_held = true;
          continue;
        }
        members_[i] = state::releasing;
        steps.push_back({.what = member_step::kind::release, .member = i});
      }
      auto wait = left;
      if (prefix_held && wait_cap_ && (!wait || *wait > *wait_cap_)) wait = wait_cap_;
      members_[k] = state::asking;
      steps.push_back({.what = member_step::kind::wait, .member = k, .wait = wait});
      phase_ = phase::wait;
      waiting_on_ = k;
      outstanding_ = steps.size();
      return steps;
    }
    case phase::wait:
      if (members_[waiting_on_] == state::held) return burst();
      if (over) return wait_over(waiting_on_);
      return restart();  // the cap: give back what is held so it cannot run out, and go again
    case phase::restart:
      return burst();
    case phase::ending:
      break;
  }
  return {};
}

member_steps multi_acquire_fsm::wait_over(std::size_t k) {
  // Stuck on k: because its server was away (an error), or because it is held (not acquired).
  if (away_[k]) return release_all_then_finish(away_[k], away_detail_[k]);
  return release_all_then_finish({}, "the wait ran out");
}

member_steps multi_acquire_fsm::release_held() {
  member_steps steps;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i] != state::held) continue;
    members_[i] = state::releasing;
    steps.push_back({.what = member_step::kind::release, .member = i});
  }
  outstanding_ = steps.size();
  return steps;
}

member_steps multi_acquire_fsm::restart() {
  auto steps = release_held();
  if (steps.empty()) return burst();
  phase_ = phase::restart;
  return steps;
}

member_steps multi_acquire_fsm::release_all_then_finish(std::error_code ec, std::string detail) {
  ending_step_ = member_step{.what = member_step::kind::finish, .ec = ec, .detail = detail};
  auto steps = release_held();
  phase_ = phase::ending;
  if (steps.empty()) return decide({});
  return steps;
}

std::optional<std::chrono::milliseconds> multi_acquire_fsm::remaining(time_point now) const {
  if (try_once_) return std::chrono::milliseconds(0);
  if (!deadline_) return std::nullopt;
  return std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now);
}

}  // namespace relock::detail
