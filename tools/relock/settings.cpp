#include <cmath>

#include "cli.hpp"

namespace relock_cli {

std::chrono::milliseconds to_duration(double seconds, const char* flag, bool zero_allowed) {
  constexpr double limit = 100.0 * 365 * 24 * 3600;  // the library's own limit: 100 years
  if (!std::isfinite(seconds) || seconds < 0 || seconds > limit || (!zero_allowed && seconds == 0)) {
    throw failure(exit_usage, std::string(flag) + " must be a number of seconds " +
                                  (zero_allowed ? ">= 0" : "> 0") + " (decimals allowed), not " +
                                  std::to_string(seconds));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
}

relock::config make_config(const global_options& g) {
  relock::config c;
  c.url = g.url;
  if (g.watchdog_seconds) c.watchdog_lease = to_duration(*g.watchdog_seconds, "--watchdog-timeout", false);
  return c;
}

relock::client connect(const global_options& g, relock::config settings) {
  try {
    return relock::client(std::move(settings));
  } catch (const relock::error& e) {
    if (e.code() == relock::errc::connection || e.code() == relock::errc::auth_failed) {
      throw failure(exit_usage, "cannot use Redis at " + g.url + ": " + e.what() +
                                    ". Start a server there, or pass --url / set RELOCK_URL.");
    }
    throw failure(exit_usage, e.what());
  }
}

}  // namespace relock_cli
