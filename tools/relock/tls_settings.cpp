// SPDX-License-Identifier: Apache-2.0
// The TLS flags and their $RELOCK_TLS_* twins, checked and turned into the library's settings.
// The URL's tls_* options still override these, in the library (config.hpp).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli.hpp"

namespace relock_cli {
namespace {

// Where a message sends the user: the flag, or the variable it came from.
std::string quoted(const given_setting& s) { return s.from + " '" + s.value + "'"; }

// Read now, so a wrong path is a usage error naming its flag, before any connection.
void check_readable(const given_setting& file) {
  if (!file.given()) return;
  std::error_code ignored;
  if (std::filesystem::is_directory(file.value, ignored)) {
    throw failure(exit_usage, quoted(file) + ": a directory; give a PEM file");
  }
  std::ifstream in(file.value);
  if (!in) {
    throw failure(exit_usage, quoted(file) + ": cannot read it (" + std::strerror(errno) +
                                  "); give a PEM file");
  }
}

bool any_flag(const tls_options& t) {
  for (const auto* s : {&t.ca, &t.cert, &t.key, &t.server_name}) {
    if (s->from.starts_with("--")) return true;
  }
  return t.insecure_skip_verify;
}

}  // namespace

bool tls_url(const std::string& url) { return url.starts_with("rediss"); }

relock::tls_settings tls_settings_of(const tls_options& t, const std::string& url) {
  if (!tls_url(url)) {
    if (any_flag(t)) {
      throw failure(exit_usage, "the --tls-* flags are for TLS URLs, and " + shown_url(url) +
                                    " is none: use rediss://, rediss-cluster:// or "
                                    "rediss-sentinel://");
    }
    return {};  // $RELOCK_TLS_* set for TLS deployments: nothing to do with this one
  }
  for (const auto* s : {&t.ca, &t.cert, &t.key, &t.server_name}) {
    if (s->given() && s->value.empty()) throw failure(exit_usage, s->from + " is empty");
  }
  if (t.cert.given() != t.key.given()) {
    const auto& has = t.cert.given() ? t.cert : t.key;
    throw failure(exit_usage, quoted(has) + " needs " +
                                  (t.cert.given() ? "its key (--tls-key, $RELOCK_TLS_KEY)"
                                                  : "its certificate (--tls-cert, "
                                                    "$RELOCK_TLS_CERT)") +
                                  ": a client certificate and its key go together");
  }
  for (const auto* file : {&t.ca, &t.cert, &t.key}) check_readable(*file);
  relock::tls_settings s;
  s.ca_file = t.ca.value;
  s.cert_file = t.cert.value;
  s.key_file = t.key.value;
  s.server_name = t.server_name.value;
  s.insecure_skip_verification = t.insecure_skip_verify;
  return s;
}

}  // namespace relock_cli
