// SPDX-License-Identifier: Apache-2.0
// red_lock's decisions, driven with a fake clock: budgets, the quorum, the validity, retries,
// and nothing held after a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <relock/errors.hpp>

#include "unit/member_steps_of.hpp"

#include "lock_sets/quorum_fsm.hpp"

namespace quorum_fsm_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::detail::lock_sets::member_event;
using relock::detail::lock_sets::member_step;
using relock::detail::lock_sets::member_steps;
using relock::detail::lock_sets::quorum_fsm;
using relock::test::finish_of;
using relock::test::members_of;
using relock::test::step_of;
using kind = member_step::kind;
using event = member_event::kind;

namespace {

const quorum_fsm::time_point t0{std::chrono::hours(1)};

quorum_fsm::settings three(std::optional<quorum_fsm::time_point> deadline) {
  quorum_fsm::settings s;
  s.members = 3;
  s.deadline = deadline;
  s.lease = 10s;
  return s;
}

}  // namespace

TEST(quorum_fsm, every_member_is_asked_at_once_with_a_share_of_the_wait) {
  quorum_fsm fsm(three(t0 + 3s));
  const auto steps = fsm.start(t0);
  ASSERT_EQ(members_of(steps, kind::wait), (std::vector<std::size_t>{0, 1, 2}));
  for (const auto& s : steps) EXPECT_EQ(s.wait, 1s);
  EXPECT_EQ(fsm.quorum(), 2u);
}

TEST(quorum_fsm, a_budget_is_at_least_a_millisecond) {
  quorum_fsm fsm(three(t0 + 1ms));
  for (const auto& s : fsm.start(t0)) EXPECT_EQ(s.wait, 1ms);
  auto once = three(std::nullopt);
  once.try_once = true;
  quorum_fsm single(once);
  for (const auto& s : single.start(t0)) EXPECT_EQ(s.wait, 1ms);
}

TEST(quorum_fsm, a_quorum_holds_with_validity_below_the_lease_by_the_elapsed_time_and_drift) {
  quorum_fsm fsm(three(t0 + 3s));
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0 + 5ms);
  fsm.on({event::failed, 1, errc::connection, "'x': refused"}, t0 + 20ms);
  const auto done = fsm.on({event::acquired, 2}, t0 + 40ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_TRUE(finish_of(done)->acquired);
  EXPECT_EQ(finish_of(done)->held, 2u);
  // 10 s - 40 ms elapsed - (100 ms + 2 ms) drift
  EXPECT_EQ(finish_of(done)->validity, 10s - 40ms - 102ms);
}

TEST(quorum_fsm, too_few_grants_give_back_what_was_taken_and_try_again) {
  quorum_fsm fsm(three(t0 + 3s));
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::refused, 1}, t0 + 1s);
  const auto back = fsm.on({event::refused, 2}, t0 + 1s);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{0}));
  const auto again = fsm.on({event::released, 0}, t0 + 1s);
  ASSERT_EQ(members_of(again, kind::wait), (std::vector<std::size_t>{0, 1, 2}));
  for (const auto& s : again) EXPECT_EQ(s.wait, 666ms);  // 2 s left, over 3
}

TEST(quorum_fsm, the_wait_ending_without_a_quorum_fails_holding_nothing) {
  quorum_fsm fsm(three(t0 + 3s));
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::refused, 1}, t0 + 3s);
  const auto back = fsm.on({event::refused, 2}, t0 + 3s);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{0}));
  EXPECT_EQ(finish_of(back), nullptr);
  const auto done = fsm.on({event::released, 0}, t0 + 3s);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
  EXPECT_FALSE(finish_of(done)->ec);
}

TEST(quorum_fsm, too_many_servers_away_for_a_quorum_is_an_error_not_a_refusal) {
  quorum_fsm fsm(three(t0 + 300ms));
  fsm.start(t0);
  fsm.on({event::failed, 1, errc::connection, "member 1: refused"}, t0 + 100ms);
  fsm.on({event::failed, 0, errc::timeout, "member 0: no reply"}, t0 + 100ms);
  fsm.on({event::acquired, 2}, t0 + 300ms);
  const auto done = fsm.on({event::released, 2}, t0 + 300ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
  EXPECT_EQ(finish_of(done)->ec, errc::timeout);
  // Every member that could not be reached, in member order.
  EXPECT_EQ(finish_of(done)->detail,
            "2 of 3 members unreachable: member 0: no reply; member 1: refused");
}

TEST(quorum_fsm, a_quorum_that_took_longer_than_the_lease_does_not_count) {
  auto s = three(std::nullopt);
  s.try_once = true;
  s.lease = 100ms;
  quorum_fsm fsm(s);
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::acquired, 1}, t0);
  const auto back = fsm.on({event::acquired, 2}, t0 + 99ms);  // 100 - 99 - 3 < 0
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(quorum_fsm, a_member_failing_for_good_ends_it_with_that_error) {
  quorum_fsm fsm(three(t0 + 3s));
  fsm.start(t0);
  fsm.on({event::acquired, 0}, t0);
  fsm.on({event::acquired, 1}, t0);
  const auto back = fsm.on({event::failed, 2, errc::wrong_type, "'x': a string"}, t0);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{0, 1}));
  fsm.on({event::released, 0}, t0);
  const auto done = fsm.on({event::released, 1}, t0);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_EQ(finish_of(done)->ec, errc::wrong_type);
}

// The wait may run out while the members an attempt took go back: the ending still says that
// too few members could be reached, as an error, not "not acquired".
TEST(quorum_fsm, a_wait_that_runs_out_while_giving_back_still_reports_the_unreachable) {
  quorum_fsm fsm(three(t0 + 900ms));
  fsm.start(t0);
  fsm.on({event::acquired, 1}, t0 + 1ms);
  fsm.on({event::failed, 0, errc::connection, "'a': refused"}, t0 + 1ms);
  const auto back = fsm.on({event::failed, 2, errc::connection, "'c': refused"}, t0 + 2ms);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{1}));
  const auto done = fsm.on({event::released, 1}, t0 + 901ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
  EXPECT_EQ(finish_of(done)->ec, errc::connection);
}

// A server whose client could not be made (redis:// c here) is a vote never granted: it counts
// in n, in the quorum and in the budgets, as a member that is away.
TEST(quorum_fsm, a_server_never_reached_counts_as_a_vote_never_granted) {
  auto s = three(t0 + 3s);
  s.members = 2;
  s.unreached = {"c:3"};
  quorum_fsm fsm(s);
  EXPECT_EQ(fsm.servers(), 3u);
  EXPECT_EQ(fsm.quorum(), 2u);
  const auto steps = fsm.start(t0);
  ASSERT_EQ(members_of(steps, kind::wait), (std::vector<std::size_t>{0, 1}));
  for (const auto& step : steps) EXPECT_EQ(step.wait, 1s);  // 3 s over 3 servers
  fsm.on({event::acquired, 0}, t0 + 5ms);
  const auto done = fsm.on({event::acquired, 1}, t0 + 10ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_TRUE(finish_of(done)->acquired);
  EXPECT_EQ(finish_of(done)->held, 2u);
}

TEST(quorum_fsm, fewer_members_than_a_quorum_fail_at_once_asking_no_one) {
  auto s = three(t0 + 3s);
  s.members = 1;
  s.unreached = {"a:1", "c:3"};
  quorum_fsm fsm(s);
  const auto done = fsm.start(t0);
  ASSERT_EQ(done.size(), 1u);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_FALSE(finish_of(done)->acquired);
  EXPECT_EQ(finish_of(done)->ec, errc::connection);
  EXPECT_EQ(finish_of(done)->detail,
            "2 of 3 members unreachable: a:1: not reached when the red_lock was made; c:3: not "
            "reached when the red_lock was made");
}

TEST(quorum_fsm, a_member_away_and_a_server_never_reached_are_too_many_together) {
  auto s = three(t0 + 300ms);
  s.members = 2;
  s.unreached = {"c:3"};
  quorum_fsm fsm(s);
  fsm.start(t0);
  fsm.on({event::acquired, 1}, t0 + 1ms);
  const auto back = fsm.on({event::failed, 0, errc::timeout, "member 0: no reply"}, t0 + 300ms);
  EXPECT_EQ(members_of(back, kind::release), (std::vector<std::size_t>{1}));
  const auto done = fsm.on({event::released, 1}, t0 + 300ms);
  ASSERT_NE(finish_of(done), nullptr);
  EXPECT_EQ(finish_of(done)->ec, errc::timeout);
  EXPECT_EQ(finish_of(done)->detail,
            "2 of 3 members unreachable: member 0: no reply; c:3: not reached when the red_lock "
            "was made");
}

}  // namespace quorum_fsm_test
