// A Lua script run by EVALSHA: its SHA-1 is computed once, locally, so the first call need
// not load it; NOSCRIPT (after a restart or failover) loads it and retries once.
#pragma once

#include <string>
#include <string_view>

#include "exec/sha1.hpp"

namespace relock::exec {

struct script {
  script(std::string_view name_, std::string_view source_)
      : name(name_), source(source_), sha(sha1_hex(source_)) {}

  std::string_view name;
  std::string_view source;
  std::string sha;
};

}  // namespace relock::exec
