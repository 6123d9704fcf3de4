// SPDX-License-Identifier: Apache-2.0
// The TLS side of a client's connections: one OpenSSL context per client, built from its
// settings, and what each connection adds to it (the name to verify and send as SNI).
#pragma once

#include <memory>
#include <string>

#include <asio/ssl/context.hpp>
#include <relock/config.hpp>

namespace relock::net {

struct tls_client {
  std::shared_ptr<asio::ssl::context> context;
  // The name every server's certificate must carry; empty: the host connected to.
  std::string server_name;
  bool verify = true;
};

// TLS 1.2 or later, the CAs of `settings.ca_file` (or the system's), the client certificate
// when given. Throws relock::error(errc::invalid_argument) naming the file it could not use.
tls_client make_tls_client(const tls_settings& settings);

}  // namespace relock::net
