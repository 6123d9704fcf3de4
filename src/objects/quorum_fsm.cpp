#include "objects/quorum_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail {

quorum_fsm::quorum_fsm(settings s) : settings_(s), members_(s.members, state::idle) {}

member_steps quorum_fsm::start(time_point now) { return attempt(now); }

member_steps quorum_fsm::attempt(time_point now) {
  using std::chrono::milliseconds;
  phase_ = phase::attempt;
  attempt_start_ = now;
  unreachable_ = 0;
  away_ = {};
  const auto n = static_cast<milliseconds::rep>(std::max<std::size_t>(members_.size(), 1));
  milliseconds budget{1};
  if (settings_.try_once) {
    budget = milliseconds(1);
  } else if (settings_.deadline) {
    budget =
        std::max(std::chrono::ceil<milliseconds>(*settings_.deadline - now) / n, milliseconds(1));
  } else {
    budget = settings_.unbounded_budget;
  }
  member_steps steps;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    members_[i] = state::asking;
    steps.push_back({.what = member_step::kind::wait, .member = i, .wait = budget});
  }
  outstanding_ = steps.size();
  return steps;
}

member_steps quorum_fsm::on(const member_event& e, time_point now) {
  if (finished_ || e.member >= members_.size() || outstanding_ == 0) return {};
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
      if (transient_member_error(e.ec)) {
        ++unreachable_;
        away_ = e.ec;
        detail_ = e.detail;
      } else if (!error_) {
        error_ = e.ec;
        detail_ = e.detail;
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

member_steps quorum_fsm::decide(time_point now) {
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
  const bool over = settings_.try_once || (settings_.deadline && *settings_.deadline <= now);
  if (phase_ == phase::attempt) {
    const auto held =
        static_cast<std::size_t>(std::count(members_.begin(), members_.end(), state::held));
    const auto left = validity(now);
    if (held >= quorum() && left.count() > 0) {
      finished_ = true;
      return {member_step{
          .what = member_step::kind::finish, .acquired = true, .validity = left, .held = held}};
    }
    std::string why = std::to_string(held) + " of " + std::to_string(members_.size()) +
                      " members taken, a quorum is " + std::to_string(quorum());
    if (held >= quorum()) why = "the quorum took longer than the lease";
    if (over) {
      // Too few members answered for a quorum to be possible: say why, as an error.
      if (unreachable_ > members_.size() - quorum()) {
        return release_all_then_finish(away_, std::to_string(unreachable_) + " of " +
                                                  std::to_string(members_.size()) +
                                                  " members unreachable: " + detail_);
      }
      return release_all_then_finish({}, why);
    }
    auto steps = release_held();
    if (steps.empty()) return attempt(now);
    phase_ = phase::retreat;
    return steps;
  }
  // phase::retreat: what the failed attempt took is back
  if (over) return release_all_then_finish({}, "the wait ran out");
  return attempt(now);
}

member_steps quorum_fsm::release_held() {
  member_steps steps;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i] != state::held) continue;
    members_[i] = state::releasing;
    steps.push_back({.what = member_step::kind::release, .member = i});
  }
  outstanding_ = steps.size();
  return steps;
}

member_steps quorum_fsm::release_all_then_finish(std::error_code ec, std::string detail) {
  ending_step_ = member_step{.what = member_step::kind::finish, .ec = ec, .detail = detail};
  auto steps = release_held();
  phase_ = phase::ending;
  if (steps.empty()) return decide({});
  return steps;
}

std::chrono::milliseconds quorum_fsm::validity(time_point now) const {
  using std::chrono::milliseconds;
  const auto elapsed = std::chrono::ceil<milliseconds>(now - attempt_start_);
  const auto drift = milliseconds(static_cast<milliseconds::rep>(
                         static_cast<double>(settings_.lease.count()) * settings_.drift_factor)) +
                     milliseconds(2);
  return settings_.lease - elapsed - drift;
}

}  // namespace relock::detail
