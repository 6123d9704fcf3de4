// SPDX-License-Identifier: Apache-2.0
// The TLS flags: see tls_flags.hpp; checked later, by tls_settings_of (tls_settings.cpp).
#include "tls_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace relock_cli {
namespace {

// An empty variable counts as unset, as $RELOCK_URL does.
void from_environment(given_setting& s, const char* variable) {
  const char* value = std::getenv(variable);
  if (value != nullptr && *value != '\0') s = {value, std::string("$") + variable};
}

void add_one(CLI::App& app, given_setting& s, const std::string& flag, const char* variable,
             const std::string& description, const char* type) {
  from_environment(s, variable);
  app.add_option_function<std::string>(
         flag,
         [&s, flag](const std::string& value) {
           s = {value, flag};
         },
         description + " (default $" + variable + ")")
      ->type_name(type);
}

}  // namespace

void add_tls_flags(CLI::App& app, tls_options& t) {
  add_one(app, t.ca, "--tls-ca", "RELOCK_TLS_CA",
          "rediss://: the CAs to trust, a PEM file; else the system's", "FILE");
  add_one(app, t.cert, "--tls-cert", "RELOCK_TLS_CERT",
          "rediss://: relock's PEM certificate, for servers with tls-auth-clients", "FILE");
  add_one(app, t.key, "--tls-key", "RELOCK_TLS_KEY", "rediss://: its PEM private key, unencrypted",
          "FILE");
  add_one(app, t.server_name, "--tls-server-name", "RELOCK_TLS_SERVER_NAME",
          "rediss://: the name the servers' certificates carry, when the URL gives an IP "
          "address or another name",
          "NAME");
  app.add_flag("--tls-insecure-skip-verify", t.insecure_skip_verify,
               "rediss://: accept any certificate; encrypted, but anyone in between can read and "
               "change the traffic, the password included (test benches only; warns on stderr)");
}

}  // namespace relock_cli
