// SPDX-License-Identifier: Apache-2.0
// Durations on the command line: plain decimal seconds ("10", "0.5"), parsed here digit by
// digit. A general number parser would also take "0x10", "1e3", "inf" and "nan", none of which
// a user means as a duration, and turn huge values into infinities.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "cli.hpp"

namespace relock_cli {
namespace {

// 100 years, the library's own limit on a lease or a wait.
constexpr std::int64_t limit_ms = 100LL * 365 * 24 * 3600 * 1000;
// More whole-second digits than this is over the limit whatever they are (and could overflow).
constexpr std::size_t max_second_digits = 10;

bool digit(char c) { return c >= '0' && c <= '9'; }

// "DIGITS", "DIGITS.DIGITS", "DIGITS." or ".DIGITS": the whole seconds and the fraction.
bool split_decimal(const std::string& text, std::string& whole, std::string& fraction) {
  const auto dot = text.find('.');
  whole = text.substr(0, dot);
  fraction = dot == std::string::npos ? std::string() : text.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return false;
  return std::all_of(whole.begin(), whole.end(), digit) &&
         std::all_of(fraction.begin(), fraction.end(), digit);
}

[[noreturn]] void refuse(const char* flag, const std::string& text, const std::string& why) {
  throw failure(exit_usage, std::string(flag) + " '" + text + "' " + why);
}

}  // namespace

std::chrono::milliseconds to_duration(const std::string& text, const char* flag, bool positive) {
  std::string whole, fraction;
  if (!split_decimal(text, whole, fraction)) {
    std::string w, f;
    if (text.size() > 1 && text.front() == '-' && split_decimal(text.substr(1), w, f)) {
      refuse(flag, text, "must not be negative");
    }
    refuse(flag, text, "is not a number of seconds; give plain decimal seconds, like 10 or 0.5");
  }
  const auto first = whole.find_first_not_of('0');
  if (first != std::string::npos && whole.size() - first > max_second_digits) {
    refuse(flag, text, "is over 100 years");
  }
  std::int64_t ms = 0;
  for (char c : whole) ms = ms * 10 + (c - '0');
  ms *= 1000;
  // Milliseconds from the first three decimals; any later non-zero digit rounds up, as the
  // library does, so a positive wait is never zero.
  for (std::size_t i = 0; i < 3; ++i) {
    ms += (i < fraction.size() ? fraction[i] - '0' : 0) * (i == 0 ? 100 : i == 1 ? 10 : 1);
  }
  if (fraction.size() > 3 && fraction.find_first_not_of('0', 3) != std::string::npos) ++ms;
  if (ms > limit_ms) refuse(flag, text, "is over 100 years");
  // A zero lease would expire before the command starts; the library refuses it only at the
  // acquire, after connecting, and a flag error should not depend on Redis being up.
  if (positive && ms == 0) refuse(flag, text, "must be more than 0");
  return std::chrono::milliseconds(ms);
}

std::string seconds_text(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(d.count()) / 1000.0);
  return text;
}

}  // namespace relock_cli
