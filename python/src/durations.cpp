// SPDX-License-Identifier: Apache-2.0
#include "durations.hpp"

#include <relock/errors.hpp>

#include <cmath>
#include <string>

namespace relock::python {

std::chrono::milliseconds to_millis(double seconds, const char* what) {
  // relock refuses durations over 100 years; checked here first so the conversion to an
  // integer cannot overflow.
  constexpr double limit = 100.0 * 366 * 24 * 3600;
  if (std::isnan(seconds) || seconds < 0 || seconds > limit) {
    throw relock::error(relock::errc::invalid_argument,
                        std::string(what) + " must be between 0 and 100 years, in seconds; got " +
                            std::to_string(seconds));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

std::optional<std::chrono::milliseconds> to_millis(std::optional<double> seconds,
                                                   const char* what) {
  if (!seconds) return std::nullopt;
  return to_millis(*seconds, what);
}

}  // namespace relock::python
