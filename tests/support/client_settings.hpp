// SPDX-License-Identifier: Apache-2.0
// A relock::config pointed at a test server: what every test that makes a client starts from.
#pragma once

#include <relock/config.hpp>

#include "support/redis_server.hpp"

namespace relock::test {

inline relock::config settings_for(const redis_server& server) {
  relock::config c;
  c.url = server.url();
  return c;
}

}  // namespace relock::test
