// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "net/backoff.hpp"

using namespace std::chrono_literals;

TEST(backoff, doubles_up_to_the_cap_with_jitter_in_the_upper_half) {
  relock::net::backoff b(100ms, 1000ms);
  const std::chrono::milliseconds ceilings[] = {100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms};
  for (auto ceiling : ceilings) {
    auto d = b.next();
    EXPECT_GE(d, ceiling / 2);
    EXPECT_LE(d, ceiling);
  }
  b.reset();
  EXPECT_LE(b.next(), 100ms);
}

TEST(backoff, survives_many_failures_without_overflow) {
  relock::net::backoff b(1ms, 50ms);
  for (int i = 0; i < 1000; ++i) EXPECT_LE(b.next(), 50ms);
}
