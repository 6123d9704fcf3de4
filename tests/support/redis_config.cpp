// SPDX-License-Identifier: Apache-2.0
#include "support/redis_config.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace relock::test {

std::string config_quote(std::string_view value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

std::string redis_config(const redis_options& options, std::uint16_t port,
                         const std::filesystem::path& dir, const std::filesystem::path& logfile,
                         std::uint16_t tls_port) {
  if (!options.acl_user.empty() && options.password.empty()) {
    throw std::invalid_argument("redis_options: acl_user '" + options.acl_user +
                                "' needs a password");
  }
  std::string c;
  auto line = [&c](std::string_view text) {
    c += text;
    c += '\n';
  };
  line("bind 127.0.0.1");
  line("port " + std::to_string(port));
  line("dir " + config_quote(dir.string()));
  line("logfile " + config_quote(logfile.string()));
  line("daemonize no");
  // Changes nothing on loopback; said explicitly so a fixture that adds another bind address
  // (containers, a second interface) is not refused for lacking a password.
  line("protected-mode no");
  // No persistence: a killed or stopped server comes back empty, and nothing slows shutdown.
  line("save \"\"");
  line("appendonly no");
  // Lets tests use DEBUG SLEEP and friends to simulate a slow or stuck server.
  line("enable-debug-command local");
  if (!options.acl_user.empty()) {
    line("user " + config_quote(options.acl_user) + " on " + config_quote(">" + options.password) +
         " \"~*\" \"&*\" \"+@all\"");
    // Off and without nopass: new connections start unauthenticated and must AUTH as the user.
    line("user default off resetpass");
  } else if (!options.password.empty()) {
    line("requirepass " + config_quote(options.password));
  }
  if (!options.tls_cert_file.empty()) {
    line("tls-port " + std::to_string(tls_port));
    line("tls-cert-file " + config_quote(options.tls_cert_file));
    line("tls-key-file " + config_quote(options.tls_key_file));
    line("tls-ca-cert-file " + config_quote(options.tls_ca_file));
    line(std::string("tls-auth-clients ") + (options.tls_auth_clients ? "yes" : "no"));
  }
  for (const auto& extra : options.extra_config) line(extra);
  return c;
}

void write_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace relock::test
