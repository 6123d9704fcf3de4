// SPDX-License-Identifier: Apache-2.0
// The standard's TimedLockable waits, for any relock type whose try_lock() tries once and
// try_lock(std::chrono::milliseconds) waits (mutex, and the lock sets): one definition of how a
// std::chrono duration or time point becomes relock's wait.
#pragma once

#include <chrono>

#include <relock/detail/export.hpp>

namespace relock::detail {

// Checks a duration and returns it in whole milliseconds (rounded up, so a positive wait is
// never zero). Throws errc::invalid_argument when negative, NaN or over the limit.
RELOCK_API std::chrono::milliseconds checked_millis(double ms, const char* what);
template <class Rep, class Period>
std::chrono::milliseconds to_millis(std::chrono::duration<Rep, Period> d, const char* what) {
  return checked_millis(std::chrono::duration<double, std::milli>(d).count(), what);
}

template <class Self>
class timed_lockable {
 public:
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    // As std::timed_mutex: a wait that is zero or less tries once.
    if (wait <= wait.zero()) return self().try_lock();
    return self().try_lock(to_millis(wait, "wait"));
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& until) {
    return try_lock_for(until - Clock::now());
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }
};

}  // namespace relock::detail
