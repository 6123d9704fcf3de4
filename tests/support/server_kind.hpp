// SPDX-License-Identifier: Apache-2.0
// Which server the fixtures start: Redis (Debian's redis-server, the default) or Valkey
// (scripts/valkey's build), chosen by $RELOCK_TEST_SERVER, so the same tests run on both
// (tests/CMakeLists.txt registers them a second time with RELOCK_TEST_SERVER=valkey).
#pragma once

#include <filesystem>
#include <string>

namespace relock::test {

enum class server_kind { redis, valkey };

// $RELOCK_TEST_SERVER: unset, empty or "redis" is redis, "valkey" is valkey; anything else
// throws std::runtime_error (a typo must not quietly test Redis twice).
server_kind test_server_kind();

// The absolute path of the server and of its Sentinel (the same program under another name
// for Valkey, which runs Sentinel when its name says so). Redis's are found on $PATH; Valkey's
// in $RELOCK_VALKEY_BIN, else the directory scripts/valkey installs into. Throws
// std::runtime_error when the program is not there, saying how to install it.
std::filesystem::path server_program();
std::filesystem::path sentinel_program();

}  // namespace relock::test
