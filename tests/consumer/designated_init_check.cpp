// SPDX-License-Identifier: Apache-2.0
// Compiled with -Wall -Wextra -Werror: users may name just the settings they need.
#include <relock/client.hpp>

using namespace std::chrono_literals;

[[maybe_unused]] relock::config settings_by_name() {
  return {.url = "redis://127.0.0.1:6379", .command_timeout = 1s};
}

[[maybe_unused]] relock::lock_options options_by_name() { return {.lease = 10s, .wait = 2s}; }
