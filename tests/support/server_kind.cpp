// SPDX-License-Identifier: Apache-2.0
#include "support/server_kind.hpp"

#include "support/server_process.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace relock::test {
namespace {

std::filesystem::path valkey_bin() {
  const char* dir = std::getenv("RELOCK_VALKEY_BIN");
  return dir && *dir ? dir : RELOCK_VALKEY_BIN;
}

std::filesystem::path valkey_program(const std::string& name) {
  auto path = valkey_bin() / name;
  if (::access(path.c_str(), X_OK) != 0) {
    throw std::runtime_error("RELOCK_TEST_SERVER=valkey, but there is no " + path.string() +
                             " (run scripts/valkey, or set RELOCK_VALKEY_BIN)");
  }
  return path;
}

}  // namespace

server_kind test_server_kind() {
  const char* value = std::getenv("RELOCK_TEST_SERVER");
  const std::string kind = value ? value : "";
  if (kind.empty() || kind == "redis") return server_kind::redis;
  if (kind == "valkey") return server_kind::valkey;
  throw std::runtime_error("RELOCK_TEST_SERVER=" + kind + ": expected redis or valkey");
}

std::filesystem::path server_program() {
  if (test_server_kind() == server_kind::valkey) return valkey_program("valkey-server");
  return find_program("redis-server", "/usr/bin/redis-server");
}

std::filesystem::path sentinel_program() {
  if (test_server_kind() == server_kind::valkey) return valkey_program("valkey-sentinel");
  return find_program("redis-sentinel", "/usr/bin/redis-sentinel");
}

}  // namespace relock::test
