// SPDX-License-Identifier: Apache-2.0
#include "net/tls_refusal.hpp"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <asio/error.hpp>
#include <asio/ip/address.hpp>
#include <asio/ssl/error.hpp>

#include <algorithm>
#include <memory>

namespace relock::net {
namespace {

// What OpenSSL's printers wrote into a memory BIO.
template <class Print>
std::string printed(Print print) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || print(bio.get()) <= 0) return "?";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string name_of(const X509_NAME* name) {
  return printed([&](BIO* b) { return X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253); });
}

std::string time_of(const ASN1_TIME* t) {
  return printed([&](BIO* b) { return ASN1_TIME_print_ex(b, t, ASN1_DTFLGS_ISO8601); });
}

// The names a certificate is valid for (its subjectAltName DNS and IP entries).
std::string names_of(X509* cert) {
  std::string out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    std::string one;
    if (n->type == GEN_DNS) {
      one = "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                                 static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName)));
    } else if (n->type == GEN_IPADD) {
      const unsigned char* ip = ASN1_STRING_get0_data(n->d.iPAddress);
      const int size = ASN1_STRING_length(n->d.iPAddress);
      if (size == 4) {
        asio::ip::address_v4::bytes_type b;
        std::copy(ip, ip + 4, b.begin());
        one = "IP:" + asio::ip::make_address_v4(b).to_string();
      } else if (size == 16) {
        asio::ip::address_v6::bytes_type b;
        std::copy(ip, ip + 16, b.begin());
        one = "IP:" + asio::ip::make_address_v6(b).to_string();
      }
    }
    if (!one.empty()) out += (out.empty() ? "" : ", ") + one;
  }
  GENERAL_NAMES_free(names);
  return out.empty() ? "no subjectAltName" : out;
}

// The server's own certificate: after a refusal OpenSSL keeps the chain the server sent (the
// peer certificate is set only once verification passed).
X509* server_certificate(SSL* ssl) {
  if (X509* peer = SSL_get0_peer_certificate(ssl)) return peer;
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
  return chain && sk_X509_num(chain) > 0 ? sk_X509_value(chain, 0) : nullptr;
}

std::string refused_certificate(SSL* ssl, long verified, const std::string& expected_name) {
  std::string why = "the server's certificate was refused (" +
                    std::string(X509_verify_cert_error_string(verified)) + ")";
  X509* cert = server_certificate(ssl);
  if (!cert) return why;
  const std::string issuer = name_of(X509_get_issuer_name(cert));
  why += ": subject " + name_of(X509_get_subject_name(cert)) + ", issuer " + issuer;
  switch (verified) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return why + "; it does not name '" + expected_name + "', only " + names_of(cert) +
             " (config::tls.server_name, tls_server_name=)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return why + "; valid from " + time_of(X509_get0_notBefore(cert)) + " until " +
             time_of(X509_get0_notAfter(cert));
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      return why + "; " + issuer +
             " is not trusted here (config::tls.ca_file, tls_ca=; default: the system's CAs)";
    default:
      return why + "; expected name '" + expected_name + "'";
  }
}

}  // namespace

std::string tls_refusal(SSL* ssl, const std::error_code& ec, const std::string& expected_name) {
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) return refused_certificate(ssl, verified, expected_name);
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    return "the server closed the connection in the TLS handshake";
  }
  if (ec.category() != asio::error::get_ssl_category()) return ec.message();
  const bool have_certificate = SSL_get_certificate(ssl) != nullptr;
  switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
    // A record that is not TLS: a plain server answered (-ERR, +PONG...).
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_UNKNOWN_PROTOCOL:
      return "the server does not speak TLS on this port (" + ec.message() +
             "): a plain port? use redis://";
    // The server's verdict on our client certificate (TLS 1.3: after the handshake).
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return have_certificate
                 ? "the server refused our client certificate (" + ec.message() + ")"
                 : "the server demands a client certificate and none was given (" + ec.message() +
                       "; config::tls.cert_file and key_file, tls_cert= and tls_key=)";
    default:
      return ec.message();
  }
}

}  // namespace relock::net
