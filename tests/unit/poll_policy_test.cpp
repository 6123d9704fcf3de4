// SPDX-License-Identifier: Apache-2.0
// config::busy_poll's decisions, without a clock.
#include <gtest/gtest.h>

#include "net/poll_policy.hpp"

using namespace std::chrono_literals;
using relock::net::poll_policy;

TEST(poll_policy, polls_only_while_a_reply_is_due_and_the_window_is_open) {
  poll_policy p(50us);
  EXPECT_TRUE(p.keep_polling(true, 0us));
  EXPECT_TRUE(p.keep_polling(true, 49us));
  EXPECT_FALSE(p.keep_polling(true, 50us));
  p.event();
  EXPECT_FALSE(p.keep_polling(false, 0us));  // nothing in flight: sleep at once
}

TEST(poll_policy, rests_after_polling_in_vain_then_tries_again) {
  poll_policy p(50us);
  for (int i = 0; i < poll_policy::misses_before_rest; ++i) {
    ASSERT_FALSE(p.resting());
    ASSERT_TRUE(p.keep_polling(true, 10us));
    ASSERT_FALSE(p.keep_polling(true, 60us));  // the window ran out before the reply
    p.event();                                 // the reply came while asleep
  }
  EXPECT_TRUE(p.resting());
  for (int i = 0; i < poll_policy::windows_of_rest; ++i) {
    ASSERT_FALSE(p.keep_polling(true, 0us)) << i;
    p.event();
  }
  EXPECT_FALSE(p.resting());
  EXPECT_TRUE(p.keep_polling(true, 0us));
}

TEST(poll_policy, a_poll_that_pays_off_clears_the_misses) {
  poll_policy p(50us);
  for (int round = 0; round < 3 * poll_policy::misses_before_rest; ++round) {
    // Misses alternate with hits: never enough in a row to rest.
    ASSERT_TRUE(p.keep_polling(true, 10us));
    ASSERT_FALSE(p.keep_polling(true, 60us));
    p.event();
    ASSERT_TRUE(p.keep_polling(true, 10us));
    p.event();  // the reply came while polling
    ASSERT_FALSE(p.resting());
  }
}
