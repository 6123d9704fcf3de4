// SPDX-License-Identifier: Apache-2.0
// Picks a loopback TCP port that nothing listens on, for servers started by the fixtures.
#pragma once

#include <cstdint>

namespace relock::test {

// Asks the kernel for a free port on 127.0.0.1 by binding port 0, then releases it. Another
// process may take the port before the caller binds it, so callers must be ready to retry
// with a new one when their bind fails (redis_server does).
std::uint16_t free_loopback_port();

}  // namespace relock::test
