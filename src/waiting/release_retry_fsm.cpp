// SPDX-License-Identifier: Apache-2.0
#include "waiting/release_retry_fsm.hpp"

namespace relock::detail::waiting {

release_retry_fsm::action release_retry_fsm::start(time_point now) {
  if (done_) return {};
  return {.what = step::wait, .until = now + pause};
}

release_retry_fsm::action release_retry_fsm::finish() {
  done_ = true;
  return {.what = step::finish};
}

// Answered meanwhile (a try of the owner settled it), or past the lease: nothing left to do. A
// booked release stays booked: the owner's next try sends it first.
release_retry_fsm::action release_retry_fsm::send_if_due(time_point now, bool booked) {
  if (!booked || now >= lease_end_) return finish();
  in_flight_ = true;
  return {.what = step::send};
}

release_retry_fsm::action release_retry_fsm::timer(time_point now, bool booked) {
  if (done_ || in_flight_ || stopping_) return {};
  return send_if_due(now, booked);
}

release_retry_fsm::action release_retry_fsm::answered(bool ran, time_point now) {
  if (done_ || !in_flight_) return {};
  in_flight_ = false;
  if (ran || stopping_) return finish();
  return {.what = step::wait, .until = now + pause};
}

release_retry_fsm::action release_retry_fsm::shutdown(time_point now, bool booked) {
  if (done_ || stopping_) return {};
  stopping_ = true;
  // One last copy, which the shutdown's drain lets finish while Redis answers.
  if (in_flight_) return {};
  return send_if_due(now, booked);
}

}  // namespace relock::detail::waiting
