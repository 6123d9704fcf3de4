// SPDX-License-Identifier: Apache-2.0
// How a std::chrono duration given to relock becomes its milliseconds, checked once for every
// type: negative, NaN or absurd durations are errc::invalid_argument before any I/O.
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

}  // namespace relock::detail
