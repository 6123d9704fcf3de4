// SPDX-License-Identifier: Apache-2.0
// A certificate authority that lives for one `relock demo --tls`: it signs one server
// certificate for 127.0.0.1 and localhost, and its own key never leaves memory, so nothing can
// be signed with it once the demo ends. Made with libcrypto (OpenSSL 3), which the library
// already brings: the demo needs no `openssl` command on PATH, and no key crosses a process.
#pragma once

#include <string>

namespace relock_cli {

struct throwaway_tls {
  std::string ca_cert;      // PEM: the CA's certificate, for the clients to trust
  std::string server_cert;  // PEM: the server's, naming IP 127.0.0.1 and DNS localhost
  std::string server_key;   // PEM: its key, unencrypted, readable by the owner only
};

// Writes ca.crt, server.crt and server.key into `dir` (which must be private: a fresh
// demo_dir). EC P-256 keys; valid from an hour ago (clock skew) for two days. Throws failure
// (exit_usage) with OpenSSL's reason when a step fails.
throwaway_tls make_throwaway_tls(const std::string& dir);

}  // namespace relock_cli
