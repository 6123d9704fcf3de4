// SPDX-License-Identifier: Apache-2.0
// Checks the messages a foreign subscriber heard on a channel, with no timeout standing in for
// "nothing else": a sentinel published afterwards must come right behind the expected ones.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/raw_subscriber.hpp"

namespace relock::test {

inline void expect_messages(raw_client& raw, raw_subscriber& sub, const std::string& channel,
                            const std::vector<std::string>& expected) {
  raw.command({"PUBLISH", channel, "sentinel"});
  for (const auto& m : expected) {
    auto got = sub.next(std::chrono::seconds(5));
    ASSERT_TRUE(got) << "expected message " << m;
    EXPECT_EQ(*got, m);
  }
  auto last = sub.next(std::chrono::seconds(5));
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, "sentinel") << "an unexpected message";
}

}  // namespace relock::test
