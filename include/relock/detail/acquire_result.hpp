// SPDX-License-Identifier: Apache-2.0
// What an acquire ends with, between the library and its thin public headers.
#pragma once

#include <string>

namespace relock::detail {

struct acquire_result {
  bool acquired = false;  // false without an error: the wait ran out
  std::string token{};    // acquired: the kind's token when it has one (fencing, permit id)
  std::string detail{};   // for humans: the server's text, why the wait ended
};

}  // namespace relock::detail
