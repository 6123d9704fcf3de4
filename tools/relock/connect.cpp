// SPDX-License-Identifier: Apache-2.0
// From global options to a connected client, and library errors to one line for the user.
#include <algorithm>
#include <iostream>
#include <vector>

#include "cli.hpp"

namespace relock_cli {

namespace {

// Where a URL's credentials are: [from, at) before its last '@'; nothing when it has none. The
// last '@' of the whole URL, so that an unescaped '@' or '/' in a password is still covered.
bool credentials(const std::string& url, std::size_t& from, std::size_t& at) {
  const auto scheme_end = url.find("://");
  from = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  at = url.rfind('@');
  return at != std::string::npos && at >= from;
}

// The password as typed: after the first ':' of the credentials, or all of them (a lone
// credential is a password, as the library and redis-cli read it).
std::string password_of(const std::string& url) {
  std::size_t from = 0, at = 0;
  if (!credentials(url, from, at)) return {};
  const auto colon = url.find(':', from);
  return colon < at ? url.substr(colon + 1, at - colon - 1) : url.substr(from, at - from);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %-escapes decoded, as the library decodes the password; malformed ones are kept as typed.
std::string percent_decoded(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

void replace_all(std::string& text, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
}

}  // namespace

std::string shown_url(const std::string& url) {
  std::size_t from = 0, at = 0;
  if (!credentials(url, from, at)) return url;
  const auto colon = url.find(':', from);
  const auto secret = colon < at ? colon + 1 : from;
  return url.substr(0, secret) + "***" + url.substr(at);
}

std::string without_secret(const std::string& text, const std::string& url) {
  std::string out = text;
  replace_all(out, url, shown_url(url));
  // A password may also appear on its own, e.g. decoded. A very short one is replaced only
  // where it ends credentials ("pw@"): taken everywhere it would garble ordinary words.
  constexpr std::size_t short_password = 4;
  const std::string typed = password_of(url);
  std::vector<std::string> secrets{typed, percent_decoded(typed)};
  // An unescaped '/' in a password ends the host part for the library, which may then quote
  // the rest as a database: each part is a secret too.
  for (std::size_t from = 0, slash = 0; slash != std::string::npos; from = slash + 1) {
    slash = typed.find('/', from);
    if (slash != std::string::npos || from > 0) secrets.push_back(typed.substr(from, slash - from));
  }
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    replace_all(out, secret + "@", "***@");
    if (secret.size() >= short_password) replace_all(out, secret, "***");
  }
  return out;
}

constexpr std::chrono::milliseconds min_watchdog{1'000};

std::chrono::milliseconds connect_timeout_for(std::chrono::milliseconds wait) {
  return std::clamp(wait, min_connect_timeout, relock::config{}.connect_timeout);
}

relock::config make_config(const global_options& g) {
  relock::config c;
  c.url = g.url;
  c.command_connections = 1;  // a handful of calls, one at a time: a pool would only add sockets
  c.observer = g.observer;
  if (g.pubsub == "sharded") c.publish = relock::publish_mode::sharded;
  if (g.pubsub == "classic") c.publish = relock::publish_mode::classic;
  if (g.pubsub == "both") c.publish = relock::publish_mode::both;
  if (g.replica_sync == "on") c.replica_sync = relock::replica_sync_mode::on;
  if (g.replica_sync == "off") c.replica_sync = relock::replica_sync_mode::off;
  c.sentinel_user = g.sentinel_user;
  c.sentinel_password = g.sentinel_password;
  c.tls = tls_settings_of(g.tls, g.url);
  if (c.tls.insecure_skip_verification) {
    // The library's warning, once per client: the one log line the CLI passes on (the others
    // repeat what its own error says).
    c.log = [](relock::log_level level, std::string_view line) {
      if (level == relock::log_level::warning && line.find("without verification") != line.npos) {
        std::cerr << "relock: warning: " << line << "\n" << std::flush;
      }
    };
  }
  if (g.connect_timeout) c.connect_timeout = *g.connect_timeout;
  if (g.watchdog_seconds) {
    c.watchdog_lease = to_duration(*g.watchdog_seconds, "--watchdog-timeout", true);
    // Renewed every third of it, each renewal a round trip: below a second a busy host or
    // network makes renewals late, and the hold is reported lost though nothing went wrong.
    if (c.watchdog_lease < min_watchdog) {
      throw failure(exit_usage, "--watchdog-timeout '" + *g.watchdog_seconds +
                                    "' is under 1 s: the watchdog renews every third of it, and "
                                    "each renewal needs a round trip to Redis in that time");
    }
  }
  return c;
}

void fail_with(const global_options& g, const std::system_error& e, const std::string& doing) {
  const auto code = e.code();
  const std::string where = doing + ": Redis at " + shown_url(g.url);
  if (tls_refused(e)) {
    const std::string_view what = e.what();
    const char* advice =
        what.find("does not name") != what.npos
            ? "give the name its certificate carries with --tls-server-name"
        : what.find("certificate was refused") != what.npos
            ? "give the CA that signed it with --tls-ca (or $RELOCK_TLS_CA)"
            : "is that its TLS port, and does it want a client certificate (--tls-cert and "
              "--tls-key)?";
    throw failure(exit_usage, where + ": " + e.what() + "; " + advice);
  }
  if (tls_url(g.url) && closed_after_handshake(e)) {
    throw failure(exit_usage,
                  where + " closed the TLS connection once it was made (" + e.what() +
                      "); a server with tls-auth-clients does that to a client without a "
                      "certificate it trusts: give one with --tls-cert and --tls-key");
  }
  if (unanswered(e)) {
    throw failure(exit_usage,
                  where + " is unreachable (" + e.what() + "); start it, or " +
                      (g.url_flag.empty() ? "point --url or $RELOCK_URL at a running one"
                                          : "fix its URL in " + g.url_flag));
  }
  if (code == relock::errc::auth_failed) {
    const bool sentinel = std::string_view(e.what()).starts_with("sentinel ");
    throw failure(exit_usage, where + " refused our credentials (" + e.what() + "); " +
                                  (sentinel ? "give the sentinels' own with --sentinel-password"
                                            : "put user:password@ in the URL"));
  }
  if (code == relock::errc::no_permission) {
    throw failure(exit_usage, doing + ": " + e.what() +
                                  "; the URL's ACL user lacks a command, key or channel relock "
                                  "needs (README, \"Least privilege\")");
  }
  throw failure(exit_usage, doing + ": " + e.what());
}

bool tls_refused(const std::system_error& e) {
  // The library's words for a handshake that failed (src/net/connection.cpp): an answer, and
  // a refusal, not silence.
  return e.code() == relock::errc::connection &&
         std::string_view(e.what()).find("TLS handshake with ") != std::string_view::npos;
}

bool closed_after_handshake(const std::system_error& e) {
  // TLS 1.3 ends the handshake before the server checks the client's certificate: its refusal
  // reaches relock as a reset (or close) on the first write or read, not as a handshake error.
  const std::string_view what = e.what();
  return e.code() == relock::errc::connection &&
         (what.find("Connection reset by peer") != what.npos ||
          what.find("closed by the server") != what.npos || what.find("Broken pipe") != what.npos ||
          what.find("alert") != what.npos);
}

bool unanswered(const std::system_error& e) {
  if (tls_refused(e)) return false;
  return e.code() == relock::errc::connection || e.code() == relock::errc::timeout;
}

void fail_to_connect(const global_options& g, const relock::error& e) {
  if (e.code() == relock::errc::invalid_argument) {  // the URL
    throw failure(exit_usage, (g.url_flag.empty() ? "" : g.url_flag + ": ") + e.what());
  }
  fail_with(g, e, "cannot connect");
}

relock::client connect(const global_options& g, relock::config settings) {
  try {
    return relock::client(std::move(settings));
  } catch (const relock::error& e) {
    fail_to_connect(g, e);
  }
}

}  // namespace relock_cli
