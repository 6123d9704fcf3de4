// From global options to a connected client, and library errors to one line for the user.
#include "cli.hpp"

namespace relock_cli {

// Keeps a password out of terminals and logs.
std::string shown_url(const std::string& url) {
  const auto at = url.rfind('@');
  const auto scheme_end = url.find("://");
  if (at == std::string::npos || scheme_end == std::string::npos) return url;
  const auto colon = url.find(':', scheme_end + 3);
  if (colon == std::string::npos || colon > at) return url;  // a user name alone
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

relock::config make_config(const global_options& g) {
  relock::config c;
  c.url = g.url;
  c.command_connections = 1;  // a handful of calls, one at a time: a pool would only add sockets
  if (g.watchdog_seconds) {
    c.watchdog_lease = to_duration(*g.watchdog_seconds, "--watchdog-timeout", true);
  }
  return c;
}

void fail_with(const global_options& g, const std::system_error& e, const std::string& doing) {
  const auto code = e.code();
  const std::string where = doing + ": Redis at " + shown_url(g.url);
  if (code == relock::errc::connection || code == relock::errc::timeout) {
    throw failure(exit_usage, where + " is unreachable (" + e.what() +
                                  "); start it, or point --url or $RELOCK_URL at a running one");
  }
  if (code == relock::errc::auth_failed) {
    throw failure(exit_usage, where + " refused our credentials (" + e.what() +
                                  "); put user:password@ in the URL");
  }
  throw failure(exit_usage, doing + ": " + e.what());
}

relock::client connect(const global_options& g, relock::config settings) {
  try {
    return relock::client(std::move(settings));
  } catch (const relock::error& e) {
    if (e.code() == relock::errc::invalid_argument) throw failure(exit_usage, e.what());  // the URL
    fail_with(g, e, "cannot connect");
  }
}

}  // namespace relock_cli
