// SPDX-License-Identifier: Apache-2.0
// The demo's throwaway CA: see throwaway_ca.hpp.
#include "throwaway_ca.hpp"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "cli.hpp"

namespace relock_cli {
namespace {

template <auto free_fn>
struct freer {
  template <class T>
  void operator()(T* p) const {
    free_fn(p);
  }
};
using key_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, freer<X509_free>>;
using extension_ptr = std::unique_ptr<X509_EXTENSION, freer<X509_EXTENSION_free>>;
using bignum_ptr = std::unique_ptr<BIGNUM, freer<BN_free>>;

constexpr long skew_seconds = 60L * 60;            // a clock a little behind still accepts it
constexpr long valid_seconds = 2L * 24 * 60 * 60;  // longer than any demo

[[noreturn]] void failed(const std::string& step) {
  const unsigned long code = ERR_get_error();
  char reason[256] = "no reason given";
  if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw failure(exit_usage, "demo --tls: cannot " + step + " for the throwaway CA: " + reason);
}

void check(bool ok, const std::string& step) {
  if (!ok) failed(step);
}

key_ptr new_key() {
  key_ptr key(EVP_EC_gen("P-256"));
  check(key != nullptr, "make a key");
  return key;
}

// `value` in OpenSSL's extension syntax ("critical,CA:TRUE"), issued by `issuer` (the cert
// itself when self-signed: its subject key identifier must be there before "keyid:always").
void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  extension_ptr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value));
  check(extension != nullptr && X509_add_ext(cert, extension.get(), -1) == 1,
        std::string("add ") + OBJ_nid2sn(nid));
}

// A certificate for `key`, named `common_name`, issued by `issuer` (null: itself).
cert_ptr new_certificate(EVP_PKEY* key, const char* common_name, X509* issuer) {
  cert_ptr cert(X509_new());
  check(cert != nullptr, "make a certificate");
  // Random: two demos' certificates never share an issuer name and a serial.
  bignum_ptr serial(BN_new());
  check(serial && BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
            BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) != nullptr,
        "pick a serial number");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  check(X509_set_version(cert.get(), X509_VERSION_3) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(cert.get()), -skew_seconds) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(cert.get()), valid_seconds) != nullptr &&
            X509_set_pubkey(cert.get(), key) == 1 &&
            X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                       reinterpret_cast<const unsigned char*>(common_name), -1, -1,
                                       0) == 1 &&
            X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : subject) == 1,
        "fill a certificate");
  add_extension(cert.get(), issuer ? issuer : cert.get(), NID_subject_key_identifier, "hash");
  return cert;
}

// Written to a file that did not exist, readable by the owner only: no moment at which another
// user could open the key.
void write_private(const std::string& path, const std::string& what,
                   const std::function<bool(FILE*)>& write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  FILE* file = fd < 0 ? nullptr : ::fdopen(fd, "w");
  if (file == nullptr) {
    if (fd >= 0) ::close(fd);
    throw failure(exit_usage, "demo --tls: cannot write the " + what + " " + path + ": " +
                                  std::strerror(errno));
  }
  const bool written = write(file);
  if (std::fclose(file) != 0 || !written) failed("write the " + what + " " + path);
}

}  // namespace

throwaway_tls make_throwaway_tls(const std::string& dir) {
  const throwaway_tls files{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key"};

  const key_ptr ca_key = new_key();
  const cert_ptr ca = new_certificate(ca_key.get(), "relock demo throwaway CA", nullptr);
  add_extension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
  add_extension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  check(X509_sign(ca.get(), ca_key.get(), EVP_sha256()) > 0, "sign the CA's certificate");

  const key_ptr server_key = new_key();
  const cert_ptr server = new_certificate(server_key.get(), "localhost", ca.get());
  add_extension(server.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  add_extension(server.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(server.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(server.get(), ca.get(), NID_ext_key_usage, "serverAuth");
  // The demo's URL names 127.0.0.1: verified as an address, as any rediss:// to an IP is.
  add_extension(server.get(), ca.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  check(X509_sign(server.get(), ca_key.get(), EVP_sha256()) > 0, "sign the server's certificate");

  write_private(files.ca_cert, "CA certificate",
                [&](FILE* f) { return PEM_write_X509(f, ca.get()) == 1; });
  write_private(files.server_cert, "server certificate",
                [&](FILE* f) { return PEM_write_X509(f, server.get()) == 1; });
  write_private(files.server_key, "server key", [&](FILE* f) {
    return PEM_write_PrivateKey(f, server_key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  return files;
}

}  // namespace relock_cli
