// SPDX-License-Identifier: Apache-2.0
// Why a TLS session with a server could not be had, in words that name the cause: the server's
// certificate (why OpenSSL refused it, its subject and issuer, its validity or its names against
// the name expected), a server that does not speak TLS, or a client certificate the server
// demands or refuses. Only public certificate fields and OpenSSL's reasons go into the text,
// never key material.
#pragma once

#include <openssl/ssl.h>

#include <string>
#include <system_error>

namespace relock::net {

// For a handshake that failed with `ec`, or a TLS session that failed before its first reply
// (TLS 1.3 servers give their verdict on a client certificate after the handshake).
// `expected_name` is the name the certificate had to carry.
std::string tls_refusal(SSL* ssl, const std::error_code& ec, const std::string& expected_name);

}  // namespace relock::net
