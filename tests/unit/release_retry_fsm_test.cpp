// SPDX-License-Identifier: Apache-2.0
// When an unanswered release goes again, driven with a fake clock.
#include <gtest/gtest.h>

#include "waiting/release_retry_fsm.hpp"

namespace release_retry_fsm_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::detail::waiting::release_retry_fsm;
using step = release_retry_fsm::step;

namespace {
const release_retry_fsm::time_point t0{std::chrono::hours(1)};
}

TEST(release_retry_fsm, a_copy_goes_a_pause_after_each_failure_until_one_runs) {
  release_retry_fsm fsm(t0 + 10s);
  auto a = fsm.start(t0);
  EXPECT_EQ(a.what, step::wait);
  EXPECT_EQ(a.until, t0 + release_retry_fsm::pause);
  EXPECT_EQ(fsm.timer(t0 + 100ms, true).what, step::send);
  EXPECT_EQ(fsm.timer(t0 + 100ms, true).what, step::none) << "one copy out at a time";
  a = fsm.answered(false, t0 + 3s);
  EXPECT_EQ(a.what, step::wait) << "no answer, or BUSY: again";
  EXPECT_EQ(a.until, t0 + 3s + release_retry_fsm::pause);
  EXPECT_EQ(fsm.timer(t0 + 3100ms, true).what, step::send);
  EXPECT_EQ(fsm.answered(true, t0 + 3200ms).what, step::finish);
  EXPECT_EQ(fsm.answered(true, t0 + 3200ms).what, step::none);
}

TEST(release_retry_fsm, it_stops_when_settled_elsewhere_or_past_the_lease) {
  release_retry_fsm settled(t0 + 10s);
  settled.start(t0);
  EXPECT_EQ(settled.timer(t0 + 100ms, false).what, step::finish)
      << "an owner's try sent it and it was answered";

  release_retry_fsm late(t0 + 1s);
  late.start(t0);
  late.timer(t0 + 100ms, true);
  late.answered(false, t0 + 1s);
  EXPECT_EQ(late.timer(t0 + 1100ms, true).what, step::finish) << "nothing left to release";
}

TEST(release_retry_fsm, shutdown_sends_one_last_copy_unless_one_is_out) {
  release_retry_fsm waiting(t0 + 10s);
  waiting.start(t0);
  EXPECT_EQ(waiting.shutdown(t0 + 10ms, true).what, step::send);
  EXPECT_EQ(waiting.timer(t0 + 100ms, true).what, step::none);
  EXPECT_EQ(waiting.answered(false, t0 + 50ms).what, step::finish) << "no more after the last";

  release_retry_fsm sending(t0 + 10s);
  sending.start(t0);
  sending.timer(t0 + 100ms, true);
  EXPECT_EQ(sending.shutdown(t0 + 110ms, true).what, step::none);
  EXPECT_EQ(sending.answered(false, t0 + 120ms).what, step::finish);
}

}  // namespace release_retry_fsm_test
