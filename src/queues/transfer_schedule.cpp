// SPDX-License-Identifier: Apache-2.0
#include "queues/transfer_schedule.hpp"

#include <algorithm>

namespace relock::detail::queues {

transfer_schedule::action transfer_schedule::run() {
  if (running_) {
    again_ = true;
    return {};
  }
  running_ = true;
  again_ = false;
  wake_at_.reset();
  return {.run = true};
}

transfer_schedule::action transfer_schedule::wake(std::int64_t at, std::int64_t now) {
  at = std::min(at, now + recheck_ms);
  if (at <= now) return run();
  if (wake_at_ && *wake_at_ <= at) return {};  // the timer already goes off sooner
  wake_at_ = at;
  return {.wake_at = at};
}

transfer_schedule::action transfer_schedule::start(std::int64_t) { return run(); }

transfer_schedule::action transfer_schedule::announced(std::int64_t due, std::int64_t now) {
  if (running_) {
    // The running transfer may have read the set before this element came: look again after.
    again_ = true;
    return {};
  }
  return wake(due, now);
}

transfer_schedule::action transfer_schedule::resubscribed(std::int64_t) { return run(); }

transfer_schedule::action transfer_schedule::transferred(std::optional<std::int64_t> next,
                                                         std::int64_t now) {
  running_ = false;
  if (again_) return run();
  return wake(next.value_or(now + recheck_ms), now);
}

transfer_schedule::action transfer_schedule::transfer_failed(std::int64_t now) {
  running_ = false;
  again_ = false;
  return wake(now + retry_ms, now);
}

transfer_schedule::action transfer_schedule::timer(std::int64_t now) {
  // Early by the steady and wall clocks' difference: the same time again.
  if (wake_at_ && *wake_at_ > now) return {.wake_at = wake_at_};
  wake_at_.reset();
  return run();
}

}  // namespace relock::detail::queues
