// SPDX-License-Identifier: Apache-2.0
#include "net/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <relock/errors.hpp>

#include <filesystem>

namespace relock::net {
namespace {

std::string pem_trouble(const std::string& file, const std::error_code& ec);

[[noreturn]] void unusable(const std::string& what, const std::string& file,
                           const std::error_code& ec) {
  throw error(errc::invalid_argument,
              "TLS: cannot use the " + what + " '" + file + "': " + pem_trouble(file, ec));
}

// OpenSSL's words for a PEM file it could not use, and what they mean here.
std::string pem_trouble(const std::string& file, const std::error_code& ec) {
  std::error_code ignored;
  if (std::filesystem::is_directory(file, ignored)) return "it is a directory";
  const auto code = static_cast<unsigned long>(ec.value());
  if (ERR_GET_LIB(code) == ERR_LIB_OSSL_DECODER || ERR_GET_LIB(code) == ERR_LIB_PEM) {
    return "no PEM key or certificate OpenSSL can read in it (" + ec.message() + ")";
  }
  return ec.message();
}

}  // namespace

tls_client make_tls_client(const tls_settings& settings) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  std::error_code ec;
  // TLS 1.2 is the oldest that Redis's and the cloud services' defaults accept.
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                           asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                           asio::ssl::context::no_tlsv1_1,
                       ec);
  if (settings.ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) unusable("system trust store", "(default paths)", ec);
  } else {
    context->load_verify_file(settings.ca_file, ec);
    if (ec) unusable("CA file", settings.ca_file, ec);
  }
  if (settings.cert_file.empty() != settings.key_file.empty()) {
    throw error(errc::invalid_argument, "TLS: a client certificate and its key go together");
  }
  if (!settings.cert_file.empty()) {
    context->use_certificate_chain_file(settings.cert_file, ec);
    if (ec) unusable("client certificate", settings.cert_file, ec);
    context->use_private_key_file(settings.key_file, asio::ssl::context::pem, ec);
    const auto code = static_cast<unsigned long>(ec.value());
    if (ec && ERR_GET_LIB(code) == ERR_LIB_X509 &&
        ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH) {
      throw error(errc::invalid_argument, "TLS: the key '" + settings.key_file +
                                              "' is not the key of the certificate '" +
                                              settings.cert_file + "'");
    }
    if (ec) unusable("client key", settings.key_file, ec);
    if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
      throw error(errc::invalid_argument, "TLS: the key '" + settings.key_file +
                                              "' is not the key of '" + settings.cert_file + "'");
    }
  }
  const bool verify = !settings.insecure_skip_verification;
  context->set_verify_mode(verify ? asio::ssl::verify_peer : asio::ssl::verify_none);
  return {std::move(context), settings.server_name, verify};
}

}  // namespace relock::net
