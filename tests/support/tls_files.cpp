// SPDX-License-Identifier: Apache-2.0
#include "support/tls_files.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace relock::test {
namespace {

// `openssl ca`'s date form (YYYYMMDDHHMMSSZ, UTC) of now + `offset`.
std::string openssl_date(std::chrono::hours offset) {
  const std::time_t t =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + offset);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d%H%M%SZ", &utc);
  return text;
}

}  // namespace

tls_files::tls_files() : dir_("relock-tls") {
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  for (const char* ca : {"ca", "stranger"}) {
    run("openssl req -x509 " + key + " -keyout " + ca + ".key -out " + ca +
        ".crt -days 2 -subj /CN=relock-test-" + ca);
  }
  const std::string server_names = "subjectAltName=DNS:redis.test,DNS:localhost\n";
  std::ofstream(dir_.path() / "server.ext") << server_names;
  std::ofstream(dir_.path() / "client.ext") << "extendedKeyUsage=clientAuth\n";
  for (const char* who : {"server", "client"}) {
    const std::string w = who;
    run("openssl req " + key + " -keyout " + w + ".key -out " + w + ".csr -subj /CN=relock-" + w);
    run("openssl x509 -req -in " + w + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out " + w +
        ".crt -days 2 -extfile " + w + ".ext");
  }

  // Server certificates outside their validity. Debian 12's OpenSSL 3.0 has no -not_before on
  // `x509 -req` (3.4 added it), but `openssl ca` takes -startdate/-enddate, with a minimal
  // config: a database, a serial, any subject, the server's names.
  std::ofstream(dir_.path() / "ca.cnf")
      << "[ca]\ndefault_ca = throwaway\n"
         "[throwaway]\ndatabase = index.txt\nserial = serial\nnew_certs_dir = .\n"
         "default_md = sha256\npolicy = any_subject\nx509_extensions = names\nunique_subject = no\n"
         "[any_subject]\ncommonName = supplied\n"
         "[names]\n"
      << server_names;
  std::ofstream(dir_.path() / "index.txt");
  std::ofstream(dir_.path() / "serial") << "1000\n";
  using std::chrono::hours;
  sign_dated("expired", openssl_date(hours(-48)), openssl_date(hours(-24)));
  sign_dated("future", openssl_date(hours(24)), openssl_date(hours(48)));
}

void tls_files::sign_dated(const std::string& name, const std::string& not_before,
                           const std::string& not_after) const {
  run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout " + name +
      ".key -out " + name + ".csr -subj /CN=relock-" + name);
  run("openssl ca -batch -notext -config ca.cnf -cert ca.crt -keyfile ca.key -in " + name +
      ".csr -out " + name + ".crt -startdate " + not_before + " -enddate " + not_after);
}

void tls_files::run(const std::string& command) const {
  const std::string log = (dir_.path() / "openssl.log").string();
  const std::string line =
      "cd '" + dir_.path().string() + "' && " + command + " >'" + log + "' 2>&1";
  if (std::system(line.c_str()) != 0) {
    std::ostringstream words;
    words << std::ifstream(log).rdbuf();
    throw std::runtime_error("tls_files: '" + command + "' failed: " + words.str());
  }
}

}  // namespace relock::test
