// SPDX-License-Identifier: Apache-2.0
// What a test asks of a redis-server, and the config file that gives it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace relock::test {

// The `{}` initializers let tests name only what they need ({.password = "pw"}) without
// GCC's -Wmissing-field-initializers.
struct redis_options {
  // requirepass for the default user; with acl_user, that user's password instead.
  std::string password{};
  // When set (with a password): an ACL user with every permission, and the default user is
  // switched off, so every connection must authenticate as this user.
  std::string acl_user{};
  // Raw redis.conf lines appended last, so they override the defaults
  // (e.g. "maxmemory 10mb", "replicaof 127.0.0.1 7000").
  std::vector<std::string> extra_config{};
  // TLS beside the plain port, which the tests' own raw clients keep using: a tls-port of its
  // own (redis_server::tls_url) with these PEM files (support/tls_files.hpp); with
  // tls_auth_clients, a client must show a certificate signed by tls_ca_file.
  std::string tls_cert_file{};
  std::string tls_key_file{};
  std::string tls_ca_file{};
  bool tls_auth_clients = false;
};

// The redis.conf text for a loopback test server on `port`, keeping its data in `dir` and
// logging to `logfile`, with TLS on `tls_port` when the options ask for it. Nothing is
// persisted: a restarted server starts empty. Throws std::invalid_argument for an acl_user
// without a password.
std::string redis_config(const redis_options& options, std::uint16_t port,
                         const std::filesystem::path& dir, const std::filesystem::path& logfile,
                         std::uint16_t tls_port = 0);

// `value` as one redis.conf argument: double-quoted, with quotes, backslashes and control
// characters escaped.
std::string config_quote(std::string_view value);

// Writes `text` to `path`, replacing it; throws std::runtime_error on failure.
void write_file(const std::filesystem::path& path, std::string_view text);

}  // namespace relock::test
