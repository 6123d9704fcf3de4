// SPDX-License-Identifier: Apache-2.0
// SHA-1, only to name Lua scripts the way Redis does (EVALSHA): not for security.
#pragma once

#include <string>
#include <string_view>

namespace relock::exec {

// 40 lowercase hex digits.
std::string sha1_hex(std::string_view data);

}  // namespace relock::exec
