// SPDX-License-Identifier: Apache-2.0
// A blocking take's decisions, driven with a fake clock: chunks, the deadline, outages, stops,
// and elements that arrive for a take that had already ended.
#include <gtest/gtest.h>

#include <relock/errors.hpp>

#include "queues/take_fsm.hpp"

namespace take_fsm_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::detail::queues::take_fsm;
using step = take_fsm::step;
using ending = take_fsm::ending;

namespace {
const take_fsm::time_point t0{std::chrono::hours(1)};
}

TEST(take_fsm, a_take_without_end_blocks_a_chunk_at_a_time) {
  take_fsm fsm(std::nullopt);
  auto a = fsm.start(t0);
  EXPECT_EQ(a.what, step::send);
  EXPECT_EQ(a.block_for, take_fsm::chunk);
  a = fsm.got_nil(t0 + take_fsm::chunk);
  EXPECT_EQ(a.what, step::send);
  a = fsm.got_element();
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::got);
  EXPECT_TRUE(fsm.finished());
}

TEST(take_fsm, a_wait_blocks_no_longer_than_its_deadline_and_ends_with_nothing) {
  take_fsm fsm(t0 + 1500ms);
  EXPECT_EQ(fsm.start(t0).block_for, 1500ms);
  auto a = fsm.got_nil(t0 + 1500ms);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::timed_out);
  EXPECT_FALSE(a.ec);
}

TEST(take_fsm, the_deadline_with_a_blpop_out_unblocks_it_and_an_orphans_element_goes_back) {
  take_fsm fsm(t0 + 1s);
  fsm.start(t0);
  auto a = fsm.deadline_passed(t0 + 1s);
  EXPECT_EQ(a.what, step::unblock);
  EXPECT_EQ(a.why, ending::timed_out);
  EXPECT_TRUE(fsm.finished());
  EXPECT_EQ(fsm.got_element().what, step::give_back);
  EXPECT_EQ(fsm.got_nil(t0 + 2s).what, step::none);
}

TEST(take_fsm, an_outage_is_waited_through_and_reported_if_the_deadline_ends_on_it) {
  take_fsm fsm(t0 + 1s);
  fsm.start(t0);
  auto a = fsm.failed(errc::connection, true, t0 + 10ms);
  EXPECT_EQ(a.what, step::retry);
  EXPECT_EQ(a.delay, take_fsm::retry_after_outage);
  EXPECT_EQ(fsm.retry_due(t0 + 110ms).what, step::send);
  fsm.failed(errc::connection, true, t0 + 200ms);
  a = fsm.deadline_passed(t0 + 1s);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::failed);
  EXPECT_EQ(a.ec, errc::connection);
}

TEST(take_fsm, a_nil_after_an_outage_clears_it) {
  take_fsm fsm(t0 + 1s);
  fsm.start(t0);
  fsm.failed(errc::connection, true, t0);
  fsm.retry_due(t0 + 100ms);
  fsm.got_nil(t0 + 1s);  // Redis answered again: the end is a plain timeout
  EXPECT_TRUE(fsm.finished());
}

TEST(take_fsm, a_refusal_for_good_ends_the_take_with_it) {
  take_fsm fsm(std::nullopt);
  fsm.start(t0);
  auto a = fsm.failed(errc::wrong_type, false, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::wrong_type);
}

TEST(take_fsm, a_stop_unblocks_a_blpop_out_or_ends_a_pause) {
  take_fsm out(std::nullopt);
  out.start(t0);
  auto a = out.stop(errc::cancelled);
  EXPECT_EQ(a.what, step::unblock);
  EXPECT_EQ(a.why, ending::cancelled);
  EXPECT_EQ(out.stop(errc::cancelled).what, step::none);

  take_fsm paused(std::nullopt);
  paused.start(t0);
  paused.failed(errc::connection, true, t0);
  EXPECT_EQ(paused.stop(errc::cancelled).what, step::finish);
  EXPECT_EQ(paused.retry_due(t0 + 1s).what, step::none);
}

}  // namespace take_fsm_test
