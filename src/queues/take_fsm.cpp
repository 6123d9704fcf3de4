// SPDX-License-Identifier: Apache-2.0
#include "queues/take_fsm.hpp"

#include <algorithm>

#include <relock/errors.hpp>

namespace relock::detail::queues {

take_fsm::action take_fsm::start(time_point now) { return send(now); }

take_fsm::action take_fsm::send(time_point now) {
  auto block_for = chunk;
  if (deadline_) {
    const auto left = std::chrono::ceil<duration>(*deadline_ - now);
    if (left.count() <= 0) return end(away_ ? ending::failed : ending::timed_out, away_);
    block_for = std::min(block_for, left);
  }
  out_ = true;
  return {.what = step::send, .block_for = block_for};
}

take_fsm::action take_fsm::end(ending why, std::error_code ec) {
  finished_ = true;
  return {.what = out_ ? step::unblock : step::finish, .why = why, .ec = ec};
}

take_fsm::action take_fsm::got_element() {
  const bool orphan = finished_;
  out_ = false;
  if (orphan) return {.what = step::give_back};
  finished_ = true;
  return {.what = step::finish, .why = ending::got};
}

take_fsm::action take_fsm::got_nil(time_point now) {
  out_ = false;
  if (finished_) return {};
  away_ = {};
  return send(now);
}

take_fsm::action take_fsm::failed(std::error_code ec, bool transient, time_point now) {
  out_ = false;
  if (finished_) return {};
  if (!transient) return end(ending::failed, ec);
  away_ = ec;
  if (deadline_ && *deadline_ <= now) return end(ending::failed, ec);
  return {.what = step::retry, .delay = retry_after_outage};
}

take_fsm::action take_fsm::retry_due(time_point now) {
  if (finished_ || out_) return {};
  return send(now);
}

take_fsm::action take_fsm::deadline_passed(time_point now) {
  if (finished_ || !deadline_ || now < *deadline_) return {};
  return end(away_ && !out_ ? ending::failed : ending::timed_out, out_ ? std::error_code{} : away_);
}

take_fsm::action take_fsm::stop(std::error_code why) {
  if (finished_) return {};
  return end(ending::cancelled, why);
}

}  // namespace relock::detail::queues
