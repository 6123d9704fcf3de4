// SPDX-License-Identifier: Apache-2.0
// Who a message wakes, without a server: order, permits, wakes passed on, wake n and wake all.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "pubsub/waiter_list.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "waiting/lock_kind.hpp"

using relock::pubsub::waiter;
using relock::pubsub::waiter_list;
using relock::pubsub::wake_all;

namespace {

// Waiters that write their number into `woken` when woken.
struct crowd {
  std::deque<waiter> w;
  std::vector<int> woken;
  waiter_list list;
  explicit crowd(int n) {
    for (int i = 0; i < n; ++i) {
      w.emplace_back().wake = [this, i] { woken.push_back(i); };
      list.push(w.back());
    }
  }
};

}  // namespace

TEST(waiter_list, wake_one_goes_in_arrival_order_and_skips_those_already_woken) {
  crowd c(3);
  c.list.wake(1);
  c.list.wake(1);
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1}));
  EXPECT_TRUE(c.w[0].signalled);
  c.list.remove(c.w[0], /*used_wake=*/true);
  c.list.wake(1);
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.list.permits(), 0u);
}

TEST(waiter_list, a_wake_nobody_hears_is_kept_for_the_next_waiter) {
  crowd c(1);
  c.list.wake(1);  // waiter 0 takes it
  c.list.wake(1);  // nobody left to wake: a permit
  EXPECT_EQ(c.woken, (std::vector<int>{0}));
  EXPECT_TRUE(c.list.take_permit());
  EXPECT_FALSE(c.list.take_permit());
}

TEST(waiter_list, a_woken_waiter_that_leaves_unused_passes_its_wake_on) {
  crowd c(3);
  c.list.wake(1);
  c.list.remove(c.w[0], /*used_wake=*/false);  // timed out just as the message came
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1}));
  // One that leaves having used its wake passes nothing on.
  c.list.remove(c.w[1], /*used_wake=*/true);
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1}));
  // The last one leaving unused leaves a permit.
  c.list.wake(1);
  c.list.remove(c.w[2], false);
  EXPECT_EQ(c.list.permits(), 1u);
  EXPECT_TRUE(c.list.empty());
}

TEST(waiter_list, wake_n_wakes_n_and_keeps_the_rest_wake_all_wakes_everyone) {
  crowd c(3);
  c.list.wake(2);
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1}));
  c.list.wake(5);  // a semaphore released 5: one left to wake, 4 kept
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.list.permits(), 4u);
  c.woken.clear();
  c.list.wake(wake_all);  // even those already woken: something changed for all
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.list.permits(), 4u);
}

TEST(waiter_list, the_lock_family_reads_0_as_one_and_anything_else_as_all) {
  EXPECT_EQ(relock::detail::waiting::lock_message_wakes("0"), 1u);
  EXPECT_EQ(relock::detail::waiting::lock_message_wakes("1"), wake_all);
  EXPECT_EQ(relock::detail::waiting::lock_message_wakes("garbage"), wake_all);
}

// redisson/redisson#6664: one wake per message left a waiter for several permits asleep while
// they were free. A message's count is a budget matched against each waiter's demand.
TEST(waiter_list, a_count_wakes_the_waiters_whose_demand_fits_in_order) {
  crowd c(3);
  c.w[0].demand = 3;
  c.w[1].demand = 1;
  c.w[2].demand = 2;
  c.list.wake(2);  // 3 does not fit; 1 does; then 1 left, 2 does not fit
  EXPECT_EQ(c.woken, (std::vector<int>{1}));
  EXPECT_EQ(c.list.permits(), 0u);  // a waiter was passed over: nothing kept for latecomers
  c.list.wake(5);                   // 3 fits, then 2 (waiter 1 is already woken)
  EXPECT_EQ(c.woken, (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(c.list.permits(), 0u);
}

TEST(waiter_list, a_waiter_for_several_that_leaves_unused_passes_its_whole_demand_on) {
  crowd c(3);
  c.w[0].demand = 2;
  c.list.wake(2);
  EXPECT_EQ(c.woken, (std::vector<int>{0}));
  c.list.remove(c.w[0], /*used_wake=*/false);
  EXPECT_EQ(c.woken, (std::vector<int>{0, 1, 2}));
}

TEST(waiter_list, a_semaphore_reads_its_count_and_a_latch_opens_on_0) {
  EXPECT_EQ(relock::detail::synchronizers::semaphore_message_wakes("4"), 4u);
  EXPECT_EQ(relock::detail::synchronizers::semaphore_message_wakes("0"), 0u);
  EXPECT_EQ(relock::detail::synchronizers::semaphore_message_wakes("-3"), 0u);
  EXPECT_EQ(relock::detail::synchronizers::semaphore_message_wakes("x"), wake_all);
}
