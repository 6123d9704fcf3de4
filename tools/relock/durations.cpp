// Durations on the command line: seconds with decimals, checked by the library's own rule so a
// refusal reads the same as from the API.
#include <cmath>
#include <cstdio>

#include <relock/lock.hpp>

#include "cli.hpp"

namespace relock_cli {

std::chrono::milliseconds to_duration(double seconds, const char* flag, bool positive) {
  // The library calls NaN "negative"; on a command line it is a typo worth naming.
  if (std::isnan(seconds)) {
    throw failure(exit_usage, std::string(flag) + " must be a number of seconds");
  }
  std::chrono::milliseconds ms;
  try {
    ms = relock::detail::checked_millis(seconds * 1000.0, flag);  // negative, over 100 years
  } catch (const relock::error& e) {
    throw failure(exit_usage, e.what());
  }
  // A zero lease would expire before the command starts; the library refuses it only at the
  // acquire, after connecting, and a flag error should not depend on Redis being up.
  if (positive && ms.count() == 0) throw failure(exit_usage, std::string(flag) + " must be > 0");
  return ms;
}

std::string seconds_text(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(d.count()) / 1000.0);
  return text;
}

}  // namespace relock_cli
