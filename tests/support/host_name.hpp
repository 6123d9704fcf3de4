// SPDX-License-Identifier: Apache-2.0
// This host's name, as relock puts it in its connections' names (relock:{id}:{host}:{pid}):
// what tests compare CLIENT LIST, `relock status` and `relock top` against.
#pragma once

#include <unistd.h>

#include <string>

namespace relock::test {

inline std::string host_name() {
  char buffer[256] = {};
  ::gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

}  // namespace relock::test
