// SPDX-License-Identifier: Apache-2.0
// Which server a node runs, as its INFO server says: "redis 7.0.15", "valkey 9.1.2". Valkey also
// reports a redis_version (the Redis it is compatible with), so its own name comes first. Shown
// to people (lock_info::server, relock status), never used to decide what to send: what a server
// can do is learnt by asking it.
#pragma once

#include <string>
#include <string_view>

namespace relock::detail {

// From INFO server's text; empty when it names no version.
std::string server_name_of(std::string_view info);

}  // namespace relock::detail
