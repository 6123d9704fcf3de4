// SPDX-License-Identifier: Apache-2.0
#include "lock_sets/quorum_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail::lock_sets {

quorum_fsm::quorum_fsm(settings s) : settings_(s), book_(s.members) {}

member_steps quorum_fsm::start(time_point now) {
  // Those never reached do not come back: no attempt could make a quorum.
  if (book_.size() < quorum()) {
    away_details_.assign(book_.size(), {});
    return give_up_unreachable(settings_.unreached.size());
  }
  return attempt(now);
}

member_steps quorum_fsm::attempt(time_point now) {
  using std::chrono::milliseconds;
  phase_ = phase::attempt;
  attempt_start_ = now;
  unreachable_ = 0;
  away_ = {};
  away_details_.assign(book_.size(), {});
  // Shared by every server, those never reached too: a member's budget is what it would be
  // had they all answered.
  const auto n = static_cast<milliseconds::rep>(std::max<std::size_t>(servers(), 1));
  milliseconds budget = settings_.unbounded_budget;
  if (settings_.try_once) {
    budget = milliseconds(1);
  } else if (settings_.deadline) {
    budget =
        std::max(std::chrono::ceil<milliseconds>(*settings_.deadline - now) / n, milliseconds(1));
  }
  member_steps steps;
  for (std::size_t i = 0; i < book_.size(); ++i) {
    steps.push_back(book_.ask(i, member_step::kind::wait, budget));
  }
  return steps;
}

member_steps quorum_fsm::on(const member_event& e, time_point now) {
  if (!book_.record(e)) return {};
  if (e.what == member_event::kind::failed && transient_member_error(e.ec)) {
    ++unreachable_;
    away_ = e.ec;
    away_details_[e.member] = e.detail;  // record() checked the member
  }
  if (!book_.answered()) return {};
  return decide(now);
}

member_steps quorum_fsm::decide(time_point now) {
  if (book_.ending()) return book_.finish();
  if (book_.error()) return give_up(book_.error(), book_.error_detail());
  const bool over = settings_.try_once || (settings_.deadline && *settings_.deadline <= now);
  if (phase_ == phase::retreat) {  // what the failed attempt took is back
    if (over) return give_up_after_attempt();
    return attempt(now);
  }
  const auto held = book_.held();
  const auto left = validity(now);
  if (held >= quorum() && left.count() > 0) {
    return book_.finish_now(
        {.what = member_step::kind::finish, .acquired = true, .validity = left, .held = held});
  }
  held_in_attempt_ = held;
  if (over) {
    if (held >= quorum()) return give_up({}, "the quorum took longer than the lease");
    return give_up_after_attempt();
  }
  auto steps = book_.release_held();
  if (steps.empty()) return attempt(now);
  phase_ = phase::retreat;
  return steps;
}

// The wait ran out after an attempt without a quorum (or while giving back what it took): too
// few members answered for a quorum to be possible says why, as an error.
member_steps quorum_fsm::give_up_after_attempt() {
  const auto away = unreachable_ + settings_.unreached.size();
  if (away > servers() - quorum()) return give_up_unreachable(away);
  return give_up({}, std::to_string(held_in_attempt_) + " of " + std::to_string(servers()) +
                         " members taken, a quorum is " + std::to_string(quorum()));
}

// Too few servers reachable for a quorum: an error naming every one that was not, the members
// in member order, then those never reached (a red_lock's members share one name).
member_steps quorum_fsm::give_up_unreachable(std::size_t away) {
  std::string why;
  for (const auto& d : away_details_) {
    if (!d.empty()) why += (why.empty() ? "" : "; ") + d;
  }
  for (const auto& server : settings_.unreached) {
    why += (why.empty() ? "" : "; ") + server + ": not reached when the red_lock was made";
  }
  return give_up(
      away_ ? away_ : make_error_code(errc::connection),
      std::to_string(away) + " of " + std::to_string(servers()) + " members unreachable: " + why);
}

member_steps quorum_fsm::give_up(std::error_code ec, std::string detail) {
  return book_.end_with({.what = member_step::kind::finish, .ec = ec, .detail = std::move(detail)});
}

std::chrono::milliseconds quorum_fsm::validity(time_point now) const {
  using std::chrono::milliseconds;
  const auto elapsed = std::chrono::ceil<milliseconds>(now - attempt_start_);
  const auto drift = milliseconds(static_cast<milliseconds::rep>(
                         static_cast<double>(settings_.lease.count()) * settings_.drift_factor)) +
                     milliseconds(2);
  return settings_.lease - elapsed - drift;
}

}  // namespace relock::detail::lock_sets
