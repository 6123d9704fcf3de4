// SPDX-License-Identifier: Apache-2.0
// multi_lock's decisions, driven with a fake clock: all-or-nothing, waiting only on the first
// member not held while holding nothing after it, and never finishing with a member held.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <relock/errors.hpp>

#include "unit/member_steps_of.hpp"

#include "lock_sets/multi_acquire_fsm.hpp"

namespace multi_acquire_fsm_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::detail::lock_sets::member_event;
using relock::detail::lock_sets::member_step;
using relock::detail::lock_sets::member_steps;
using relock::detail::lock_sets::multi_acquire_fsm;
using relock::test::finish_of;
using relock::test::members_of;
using relock::test::step_of;
using kind = member_step::kind;
using event = member_event::kind;

namespace {

const multi_acquire_fsm::time_point t0{std::chrono::hours(1)};

}  // namespace

TEST(multi_acquire_fsm, an_uncontended_set_is_asked_all_at_once_and_held) {
  multi_acquire_fsm fsm(3, t0 + 1s, false, std::nullopt);
  const auto first = fsm.start(t0);
  EXPECT_EQ(members_of(first, kind::try_once), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(fsm.on({event::acquired, 2}, t0).empty());
  EXPECT_TRUE(fsm.on({event::acquired, 0}, t0).empty());
  const auto last = fsm.on({event::acquired, 1}, t0);
  ASSERT_NE(finish_of(last), nullptr);
  EXPECT_TRUE(finish_of(last)->acquired);
  EXPECT_EQ(finish_of(last)->held, 3u);
  EXPECT_TRUE(fsm.finished());
}

TEST(multi_acquire_fsm, a_contended_member_is_waited_on_after_giving_back_the_members_after_it) {
  multi_acquire_fsm fsm(3, t0 + 1s, false, std::nullopt);
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::refused, 1}, t0);
  const auto next = fsm.on({event::acquired, 2}, t0 + 10ms);
  // 0 stays held (it comes before 1), 2 goes back (it comes after), 1 is waited on.
  EXPECT_EQ(members_of(next, kind::release), (std::vector<std::size_t>{2}));
  ASSERT_EQ(members_of(next, kind::wait), (std::vector<std::size_t>{1}));
  const auto& wait = *step_of(next, kind::wait);
  ASSERT_TRUE(wait.wait);
  EXPECT_EQ(*wait.wait, 990ms);
  EXPECT_TRUE(fsm.on({event::released, 2}, t0 + 11ms).empty());
  const auto again = fsm.on({event::acquired, 1}, t0 + 500ms);
  EXPECT_EQ(members_of(again, kind::try_once), (std::vector<std::size_t>{2}));
  const auto done = fsm.on({event::acquired, 2}, t0 + 501ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_TRUE(finish_of(done)->acquired);
}

TEST(multi_acquire_fsm, the_wait_running_out_gives_back_everything_before_finishing) {
  multi_acquire_fsm fsm(3, t0 + 1s, false, std::nullopt);
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::acquired, 1}, t0);
  fsm.on({event::refused, 2}, t0);  // waits on 2 holding 0 and 1
  const auto out = fsm.on({event::refused, 2}, t0 + 1s);
  EXPECT_EQ(members_of(out, kind::release), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(finish_of(out), nullptr);  // not before the releases are answered
  EXPECT_TRUE(fsm.on({event::released, 1}, t0 + 1s).empty());
  const auto done = fsm.on({event::released, 0, errc::not_owner}, t0 + 1s);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
  EXPECT_FALSE(finish_of(done)->ec);
}

TEST(multi_acquire_fsm, try_once_never_waits) {
  multi_acquire_fsm fsm(2, std::nullopt, true, std::nullopt);
  fsm.start(t0);
  fsm.on({event::refused, 0}, t0);
  const auto out = fsm.on({event::acquired, 1}, t0);
  EXPECT_EQ(members_of(out, kind::release), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(members_of(out, kind::wait).empty());
  const auto done = fsm.on({event::released, 1}, t0);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
}

TEST(multi_acquire_fsm, waiting_for_ever_sends_a_wait_without_an_end) {
  multi_acquire_fsm fsm(2, std::nullopt, false, std::nullopt);
  fsm.start(t0);
  fsm.on({event::refused, 0}, t0);
  const auto out = fsm.on({event::acquired, 1}, t0);
  const auto waits = members_of(out, kind::wait);
  ASSERT_EQ(waits, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(step_of(out, kind::wait)->wait.has_value());
}

TEST(multi_acquire_fsm, a_member_failing_for_good_ends_it_with_that_error_and_nothing_held) {
  multi_acquire_fsm fsm(3, t0 + 1s, false, std::nullopt);
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::failed, 1, errc::wrong_type, "'b': not a lock"}, t0);
  const auto out = fsm.on({event::acquired, 2}, t0);
  EXPECT_EQ(members_of(out, kind::release), (std::vector<std::size_t>{0, 2}));
  fsm.on({event::released, 0}, t0);
  const auto done = fsm.on({event::released, 2}, t0);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_EQ(finish_of(done)->ec, errc::wrong_type);
  EXPECT_EQ(finish_of(done)->detail, "'b': not a lock");
}

TEST(multi_acquire_fsm, redis_away_in_a_burst_is_waited_through_and_at_the_end_reported) {
  multi_acquire_fsm fsm(2, t0 + 1s, false, std::nullopt);
  fsm.start(t0);
  fsm.on({event::failed, 0, errc::connection, "'a': refused"}, t0);
  const auto out = fsm.on({event::acquired, 1}, t0);
  EXPECT_EQ(members_of(out, kind::wait), (std::vector<std::size_t>{0}));
  fsm.on({event::released, 1}, t0);
  const auto done = fsm.on({event::failed, 0, errc::connection, "'a': still away"}, t0 + 1s);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_EQ(finish_of(done)->ec, errc::connection);
}

TEST(multi_acquire_fsm, an_explicit_lease_caps_a_wait_while_holding_and_starts_over_at_the_cap) {
  multi_acquire_fsm fsm(2, t0 + 10s, false, 500ms);
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  const auto out = fsm.on({event::refused, 1}, t0);
  const auto& wait = *step_of(out, kind::wait);
  ASSERT_TRUE(wait.wait);
  EXPECT_EQ(*wait.wait, 500ms);
  const auto back = fsm.on({event::refused, 1}, t0 + 500ms);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{0}));
  const auto again = fsm.on({event::released, 0}, t0 + 501ms);
  EXPECT_EQ(members_of(again, kind::try_once), (std::vector<std::size_t>{0, 1}));
}

TEST(multi_acquire_fsm, a_wait_on_the_first_member_is_not_capped_as_nothing_is_held) {
  multi_acquire_fsm fsm(2, t0 + 10s, false, 500ms);
  fsm.start(t0);
  fsm.on({event::refused, 0}, t0);
  const auto out = fsm.on({event::refused, 1}, t0);
  const auto& wait = *step_of(out, kind::wait);
  ASSERT_TRUE(wait.wait);
  EXPECT_EQ(*wait.wait, 10s);
}

TEST(multi_acquire_fsm, late_or_stray_events_change_nothing) {
  multi_acquire_fsm fsm(1, std::nullopt, true, std::nullopt);
  fsm.start(t0);
  EXPECT_TRUE(fsm.on({event::acquired, 7}, t0).empty());
  ASSERT_NE(finish_of(fsm.on({event::acquired, 0}, t0)), nullptr);
  EXPECT_TRUE(fsm.on({event::acquired, 0}, t0).empty());
}

TEST(multi_acquire_fsm, two_sets_over_the_same_members_cannot_wait_on_each_other) {
  // A and B, same members (same canonical order). A got 0 and 2, B got 1: A waits on 1 holding
  // only 0; B, missing 0, gives 1 back and waits on 0 holding nothing. No cycle.
  multi_acquire_fsm a(3, std::nullopt, false, std::nullopt);
  multi_acquire_fsm b(3, std::nullopt, false, std::nullopt);
  a.start(t0);
  b.start(t0);
  a.on({event::acquired, 0}, t0);
  a.on({event::acquired, 2}, t0);
  b.on({event::refused, 0}, t0);
  b.on({event::acquired, 1}, t0);
  const auto a_next = a.on({event::refused, 1}, t0);
  const auto b_next = b.on({event::refused, 2}, t0);
  EXPECT_EQ(members_of(a_next, kind::release), (std::vector<std::size_t>{2}));
  EXPECT_EQ(members_of(a_next, kind::wait), (std::vector<std::size_t>{1}));
  EXPECT_EQ(members_of(b_next, kind::release), (std::vector<std::size_t>{1}));
  EXPECT_EQ(members_of(b_next, kind::wait), (std::vector<std::size_t>{0}));
}

}  // namespace multi_acquire_fsm_test
