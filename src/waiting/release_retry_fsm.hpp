// SPDX-License-Identifier: Apache-2.0
// When a release whose answer never came is sent again (release_retry.hpp), with no I/O and no
// clock of its own: a copy every retry_pause after the last one failed, while the release is
// still booked and its lease lasts; done once a copy ran; at shutdown one last copy, unless one
// is out.
//
// Not thread-safe: one operation drives it, on the I/O thread.
#pragma once

#include <chrono>
#include <optional>

namespace relock::detail::waiting {

class release_retry_fsm {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  static constexpr std::chrono::milliseconds pause{100};

  enum class step {
    none,    // nothing to do
    wait,    // arm the timer for `until`, then report timer()
    send,    // send a copy; report answered()
    finish,  // stop: the release ran, was settled elsewhere, or its lease is over
  };
  struct action {
    step what = step::none;
    std::optional<time_point> until{};
  };

  // `lease_end`: after it a copy would find nothing to release.
  explicit release_retry_fsm(time_point lease_end) : lease_end_(lease_end) {}

  action start(time_point now);
  // `booked`: the release is still in the take-back book (an owner's try may have settled it).
  action timer(time_point now, bool booked);
  // A copy's answer: `ran` when the server ran it, whatever it found.
  action answered(bool ran, time_point now);
  action shutdown(time_point now, bool booked);

 private:
  action send_if_due(time_point now, bool booked);
  action finish();

  time_point lease_end_;
  bool in_flight_ = false;
  bool stopping_ = false;
  bool done_ = false;
};

}  // namespace relock::detail::waiting
