// SPDX-License-Identifier: Apache-2.0
// Waiting on a condition with a deadline: what tests do instead of sleeping and hoping.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace relock::test {

// Polls `condition` until it returns true (returns true at once) or `timeout` has passed
// (returns false after one last check). The condition is always evaluated at least once.
//   EXPECT_TRUE(wait_until([&] { return lost.load(); }, 5s));
template <class Condition>
bool wait_until(Condition condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    // Never sleep past the deadline, so a late condition still gets its last look in time.
    using duration = std::chrono::steady_clock::duration;
    std::this_thread::sleep_for(std::min<duration>(poll, deadline - now));
  }
}

}  // namespace relock::test
