// SPDX-License-Identifier: Apache-2.0
// The unlock latches on a server (data-layout §1.8): a finished release's latch lingers until
// its client's sweeper deletes it, up to config::unlock_latch_sweep_delay later.
#pragma once

#include <cstddef>

#include "support/raw_client.hpp"

namespace relock::test {

inline std::size_t unlock_latches(raw_client& raw) {
  return raw.command({"KEYS", "redisson_unlock_latch:*"}).elements.size();
}

}  // namespace relock::test
