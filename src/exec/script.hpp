// SPDX-License-Identifier: Apache-2.0
// A Lua script run by EVALSHA: its SHA-1 is computed once, locally, so the first call need
// not load it; NOSCRIPT (after a restart or failover) loads it and retries once. A script that
// writes is followed by WAIT when replica sync is on (executor.hpp).
#pragma once

#include <string>
#include <string_view>

#include "exec/sha1.hpp"

namespace relock::exec {

struct script {
  script(std::string_view name_, std::string_view source_, bool writes_ = true)
      : name(name_), source(source_), sha(sha1_hex(source_)), writes(writes_) {}

  std::string_view name;
  std::string_view source;
  std::string sha;
  bool writes;
};

}  // namespace relock::exec
