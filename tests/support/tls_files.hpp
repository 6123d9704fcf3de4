// SPDX-License-Identifier: Apache-2.0
// A throwaway certificate authority and the certificates a TLS test needs, made by Debian's
// `openssl` command in a temp dir that goes with the object. EC P-256 keys, valid two days
// (except the two made to be outside their validity).
//   tls_files tls;
//   redis_server server({.tls_cert_file = tls.server_cert(), ...});
#pragma once

#include <string>

#include "support/temp_dir.hpp"

namespace relock::test {

class tls_files {
 public:
  // Throws std::runtime_error with openssl's words when a step fails.
  tls_files();

  // The CA that signed everything below.
  std::string ca() const { return file("ca.crt"); }
  // The server's: it names redis.test and localhost (DNS), not 127.0.0.1, so a client that
  // connects by address must be told the name (tls_server_name).
  std::string server_cert() const { return file("server.crt"); }
  std::string server_key() const { return file("server.key"); }
  // A client's, for servers with tls-auth-clients.
  std::string client_cert() const { return file("client.crt"); }
  std::string client_key() const { return file("client.key"); }
  // Another CA, which signed none of them.
  std::string stranger_ca() const { return file("stranger.crt"); }
  // Server certificates with the same names and CA, outside their validity: one that expired
  // yesterday (valid from two days ago), one valid only from tomorrow.
  std::string expired_cert() const { return file("expired.crt"); }
  std::string expired_key() const { return file("expired.key"); }
  std::string not_yet_valid_cert() const { return file("future.crt"); }
  std::string not_yet_valid_key() const { return file("future.key"); }

 private:
  std::string file(const char* name) const { return (dir_.path() / name).string(); }
  void run(const std::string& command) const;
  // A server certificate (the server's names) signed by ca() for [not_before, not_after].
  void sign_dated(const std::string& name, const std::string& not_before,
                  const std::string& not_after) const;

  temp_dir dir_;
};

}  // namespace relock::test
