// SPDX-License-Identifier: Apache-2.0
// Server replies built by hand, for tests that feed parsers and routers what a server would
// send (CLUSTER SHARDS, CLUSTER SLOTS) without one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "resp/reply.hpp"

namespace relock::test {

inline resp::reply str(std::string s) { return resp::reply::make_string(std::move(s)); }
inline resp::reply num(std::int64_t v) { return resp::reply::make_integer(v); }
inline resp::reply arr(std::vector<resp::reply> e) { return resp::reply::make_array(std::move(e)); }

}  // namespace relock::test
