// SPDX-License-Identifier: Apache-2.0
// When a delayed queue's transfer runs (data-layout §9), with no I/O and no clock of its own:
// the task around it (delayed_transfer) feeds it what happened, with the wall-clock time in
// Unix ms (due times are wall-clock, written by every client's own clock), and runs the
// transfer or sets its timer as answered.
//
// It runs the transfer when the earliest element comes due (the script returns that time), when
// the channel announces an earlier one, when the subscription comes back after a reconnect
// (messages may have been lost), and at least every `recheck` whatever it heard: Redisson's
// transfer stops for good when it loses its subscription (redisson/redisson#4088, #5575, #6020);
// this one keeps delivering on its timer alone, at most `recheck` late for an element whose
// announcement was lost. One transfer at a time; a trigger during one runs another after it.
#pragma once

#include <cstdint>
#include <optional>

namespace relock::detail::queues {

class transfer_schedule {
 public:
  static constexpr std::int64_t recheck_ms = 1'000;
  static constexpr std::int64_t retry_ms = 500;  // after a failed transfer

  struct action {
    bool run = false;                       // run the transfer now
    std::optional<std::int64_t> wake_at{};  // else: the timer, at this wall time (Unix ms)
  };

  action start(std::int64_t now);
  // The channel: an element due at `due` is now the earliest.
  action announced(std::int64_t due, std::int64_t now);
  // The subscription is back after a reconnect.
  action resubscribed(std::int64_t now);
  // The transfer answered: the earliest element left is due at `next` (none: the set is empty).
  action transferred(std::optional<std::int64_t> next, std::int64_t now);
  action transfer_failed(std::int64_t now);
  action timer(std::int64_t now);

  bool running() const { return running_; }

 private:
  action run();
  action wake(std::int64_t at, std::int64_t now);

  bool running_ = false;
  bool again_ = false;  // a trigger came while a transfer ran
  std::optional<std::int64_t> wake_at_;
};

}  // namespace relock::detail::queues
