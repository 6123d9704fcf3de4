// SPDX-License-Identifier: Apache-2.0
// Which server a node runs, as its INFO says: "redis 7.0.15", "valkey 9.1.2". Valkey also
// reports a redis_version (the Redis it is compatible with), so its own name comes first.
#pragma once

#include <string>
#include <string_view>

#include <relock/client.hpp>

namespace relock_cli {

// From INFO server's text; "unknown" when it names no version.
std::string server_name_of(std::string_view info);

// Asks `node`; "unknown" when INFO is refused or fails (it is only ever shown).
std::string server_name(const relock::client& client, const relock::server_node& node);

}  // namespace relock_cli
