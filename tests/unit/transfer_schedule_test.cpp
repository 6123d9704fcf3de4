// SPDX-License-Identifier: Apache-2.0
// When a delayed queue's transfer runs, driven with a fake wall clock: at the earliest due
// time, on announcements, after a reconnect, at least every recheck, one at a time.
#include <gtest/gtest.h>

#include "queues/transfer_schedule.hpp"

namespace transfer_schedule_test {  // keeps this file's names apart in a unity build

using relock::detail::queues::transfer_schedule;

namespace {
constexpr std::int64_t t0 = 1'700'000'000'000;
}

TEST(transfer_schedule, runs_at_start_then_wakes_for_the_earliest_due_element) {
  transfer_schedule s;
  EXPECT_TRUE(s.start(t0).run);
  auto a = s.transferred(t0 + 300, t0 + 1);
  EXPECT_FALSE(a.run);
  EXPECT_EQ(a.wake_at, t0 + 300);
  EXPECT_TRUE(s.timer(t0 + 300).run);
}

TEST(transfer_schedule, an_empty_set_is_looked_at_again_every_recheck) {
  transfer_schedule s;
  s.start(t0);
  EXPECT_EQ(s.transferred(std::nullopt, t0).wake_at, t0 + transfer_schedule::recheck_ms);
  s.timer(t0 + transfer_schedule::recheck_ms);
  // A far element does not push the next look past the recheck either.
  EXPECT_EQ(s.transferred(t0 + 60'000, t0 + 1'000).wake_at,
            t0 + 1'000 + transfer_schedule::recheck_ms);
}

TEST(transfer_schedule, an_announced_earlier_element_brings_the_timer_forward_not_back) {
  transfer_schedule s;
  s.start(t0);
  s.transferred(t0 + 800, t0);
  EXPECT_EQ(s.announced(t0 + 200, t0 + 10).wake_at, t0 + 200);
  EXPECT_FALSE(s.announced(t0 + 500, t0 + 20).wake_at.has_value());  // later: the timer stands
  EXPECT_TRUE(s.announced(t0 + 15, t0 + 30).run);                    // already due
}

TEST(transfer_schedule, one_transfer_at_a_time_and_a_trigger_meanwhile_runs_another_after) {
  transfer_schedule s;
  EXPECT_TRUE(s.start(t0).run);
  EXPECT_FALSE(s.announced(t0, t0).run);
  EXPECT_FALSE(s.resubscribed(t0).run);
  EXPECT_TRUE(s.transferred(std::nullopt, t0 + 5).run);  // the element may have come after it read
  EXPECT_TRUE(s.running());
}

TEST(transfer_schedule, a_failed_transfer_is_retried_and_a_reconnect_runs_one) {
  transfer_schedule s;
  s.start(t0);
  EXPECT_EQ(s.transfer_failed(t0).wake_at, t0 + transfer_schedule::retry_ms);
  EXPECT_TRUE(s.resubscribed(t0 + 10).run);
}

TEST(transfer_schedule, a_timer_a_little_early_waits_for_its_time) {
  transfer_schedule s;
  s.start(t0);
  s.transferred(t0 + 300, t0);
  EXPECT_EQ(s.timer(t0 + 299).wake_at, t0 + 300);
  EXPECT_TRUE(s.timer(t0 + 300).run);
}

}  // namespace transfer_schedule_test
