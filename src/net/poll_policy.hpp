// SPDX-License-Identifier: Apache-2.0
// When the I/O thread should poll instead of sleeping (config::busy_poll), as a state machine
// with no clock and no I/O, so that it can be tested on its own.
//
// Poll while a reply is due and the last event is less than `window` old. Polling that keeps
// missing (a slow network: replies take longer than the window) only burns CPU, so after
// `misses_before_rest` windows polled in vain in a row it sleeps at once for the next
// `windows_of_rest` waits for a reply, then tries again.
#pragma once

#include <chrono>

namespace relock::net {

class poll_policy {
 public:
  static constexpr int misses_before_rest = 8;
  static constexpr int windows_of_rest = 256;

  explicit poll_policy(std::chrono::microseconds window) : window_(window) {}

  // Handlers ran.
  void event() {
    if (polling_) misses_ = 0;  // the polling paid off
    polling_ = false;
  }

  // Nothing was ready: true to poll again, false to sleep until the next event.
  bool keep_polling(bool reply_due, std::chrono::microseconds since_event) {
    if (reply_due && resting_ == 0 && since_event < window_) {
      polling_ = true;
      return true;
    }
    if (reply_due && polling_ && ++misses_ >= misses_before_rest) {
      resting_ = windows_of_rest;
      misses_ = 0;
    } else if (reply_due && resting_ > 0) {
      --resting_;
    }
    polling_ = false;
    return false;
  }

  bool resting() const { return resting_ > 0; }

 private:
  std::chrono::microseconds window_;
  bool polling_ = false;  // this window has polled at least once
  int misses_ = 0;
  int resting_ = 0;
};

}  // namespace relock::net
