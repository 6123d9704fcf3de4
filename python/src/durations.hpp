// SPDX-License-Identifier: Apache-2.0
// Python's durations are float seconds (as threading's timeouts; relock/_durations.py turns a
// timedelta into them); relock's are milliseconds.
#pragma once

#include <chrono>
#include <limits>
#include <optional>

namespace relock::python {

// `seconds` as whole milliseconds, rounded up so that a wait or lease shorter than a
// millisecond is not silently none at all. NaN, infinities and anything relock would refuse
// as absurd (over 100 years) or negative throw errc::invalid_argument naming `what`.
std::chrono::milliseconds to_millis(double seconds, const char* what);
std::optional<std::chrono::milliseconds> to_millis(std::optional<double> seconds, const char* what);

// Milliseconds as float seconds.
inline double to_seconds(std::chrono::milliseconds ms) { return ms.count() / 1000.0; }

// A setting or a remaining time as Python shows it: None when unset, inf for "for ever"
// (milliseconds::max()).
inline std::optional<double> seconds_or_none(std::optional<std::chrono::milliseconds> ms) {
  if (!ms) return std::nullopt;
  if (*ms == std::chrono::milliseconds::max()) return std::numeric_limits<double>::infinity();
  return to_seconds(*ms);
}

}  // namespace relock::python
