// SPDX-License-Identifier: Apache-2.0
#include "support/tls_files.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace relock::test {

tls_files::tls_files() : dir_("relock-tls") {
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  for (const char* ca : {"ca", "stranger"}) {
    run("openssl req -x509 " + key + " -keyout " + ca + ".key -out " + ca +
        ".crt -days 2 -subj /CN=relock-test-" + ca);
  }
  std::ofstream(dir_.path() / "server.ext") << "subjectAltName=DNS:redis.test,DNS:localhost\n";
  std::ofstream(dir_.path() / "client.ext") << "extendedKeyUsage=clientAuth\n";
  for (const char* who : {"server", "client"}) {
    const std::string w = who;
    run("openssl req " + key + " -keyout " + w + ".key -out " + w + ".csr -subj /CN=relock-" + w);
    run("openssl x509 -req -in " + w + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out " + w +
        ".crt -days 2 -extfile " + w + ".ext");
  }
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
