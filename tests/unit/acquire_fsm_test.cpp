// SPDX-License-Identifier: Apache-2.0
// The waiting loop's decisions, driven with a fake clock: every path the acquire takes, without
// a server.
#include <set>

#include <gtest/gtest.h>

#include <vector>

#include <relock/errors.hpp>

#include "waiting/acquire_fsm.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::detail::waiting::acquire_fsm;
using step = acquire_fsm::step;
using ending = acquire_fsm::ending;

namespace {

const acquire_fsm::time_point t0{std::chrono::hours(1)};

// A waiting acquire that has tried once, subscribed and tried again: it is queued now.
acquire_fsm queued_waiter(std::optional<acquire_fsm::time_point> deadline) {
  acquire_fsm fsm(true, deadline);
  EXPECT_EQ(fsm.start().what, step::send_try);
  EXPECT_EQ(fsm.refused(500ms, t0).what, step::subscribe);
  EXPECT_EQ(fsm.subscribed().what, step::send_try);
  return fsm;
}

}  // namespace

TEST(acquire_fsm, a_single_try_takes_a_free_lock_or_reports_not_acquired) {
  acquire_fsm free(false, std::nullopt);
  EXPECT_EQ(free.start().what, step::send_try);
  auto a = free.acquired();
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::acquired);
  EXPECT_FALSE(a.ec);

  acquire_fsm held(false, std::nullopt);
  held.start();
  a = held.refused(300ms, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::not_acquired);
  EXPECT_FALSE(a.ec);
}

TEST(acquire_fsm, a_wait_subscribes_before_it_sleeps_then_tries_on_every_wake) {
  acquire_fsm fsm(true, std::nullopt);
  EXPECT_EQ(fsm.start().what, step::send_try);
  auto a = fsm.refused(500ms, t0);
  EXPECT_EQ(a.what, step::subscribe);
  EXPECT_FALSE(a.until) << "no deadline: nothing to time while subscribing";
  EXPECT_EQ(fsm.woken().what, step::none) << "a wake before the confirmation changes nothing";
  EXPECT_EQ(fsm.subscribed().what, step::send_try);
  a = fsm.refused(500ms, t0);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + 500ms) << "sleeps for the holder's TTL";
  EXPECT_EQ(fsm.woken().what, step::send_try);
  EXPECT_EQ(fsm.woken().what, step::none) << "a second wake while trying is not a second try";
  EXPECT_EQ(fsm.acquired().why, ending::acquired);
  EXPECT_EQ(fsm.timer(t0 + 1s).what, step::none) << "late events after the end do nothing";
}

TEST(acquire_fsm, a_wait_behind_waiters_of_its_client_sleeps_until_its_turn_without_a_try) {
  acquire_fsm fsm(true, std::nullopt);
  auto a = fsm.start(/*behind_waiters=*/true, t0);
  EXPECT_EQ(a.what, step::subscribe) << "it joins the queue first";
  a = fsm.subscribed();
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + acquire_fsm::no_ttl_recheck) << "a lost message costs this at most";
  EXPECT_EQ(fsm.woken().what, step::send_try) << "its turn";
  a = fsm.refused(500ms, t0 + 1ms);
  EXPECT_EQ(a.what, step::sleep) << "refused, it waits as any queued waiter";
  EXPECT_EQ(a.until, t0 + 501ms);
  EXPECT_EQ(fsm.woken().what, step::send_try);
  EXPECT_EQ(fsm.acquired().why, ending::acquired);

  acquire_fsm unheard(true, std::nullopt);
  unheard.start(true, t0);
  EXPECT_EQ(unheard.subscribed(/*listening=*/false).what, step::send_try)
      << "no messages will come: it looks for itself";
  acquire_fsm once(false, std::nullopt);
  EXPECT_EQ(once.start(true, t0).what, step::send_try) << "a single try looks at once";
}

TEST(acquire_fsm, a_wait_on_a_channel_already_listened_to_joins_first_and_tries_once) {
  acquire_fsm fsm(true, t0 + 10s);
  auto a = fsm.start(/*behind_waiters=*/false, t0, /*listening=*/true);
  EXPECT_EQ(a.what, step::subscribe) << "it joins before it tries";
  EXPECT_EQ(a.until, t0 + 10s);
  EXPECT_EQ(fsm.subscribed().what, step::send_try) << "confirmed: it tries at once";
  a = fsm.refused(500ms, t0 + 1ms);
  EXPECT_EQ(a.what, step::sleep) << "a release after the try is heard: no second try";
  EXPECT_EQ(a.until, t0 + 501ms);
  EXPECT_EQ(fsm.woken().what, step::send_try);
  EXPECT_EQ(fsm.acquired().why, ending::acquired);

  acquire_fsm once(false, std::nullopt);
  EXPECT_EQ(once.start(false, t0, true).what, step::send_try) << "a single try never joins";
  acquire_fsm spin(true, std::nullopt, acquire_fsm::backoff{1ms, 8ms});
  EXPECT_EQ(spin.start(false, t0, true).what, step::send_try) << "a spin lock never listens";
  acquire_fsm lost(true, std::nullopt);
  lost.start(false, t0, true);
  EXPECT_EQ(lost.subscribed(/*listening=*/false).what, step::send_try);
  EXPECT_EQ(lost.refused(5s, t0).until, t0 + acquire_fsm::no_ttl_recheck)
      << "the subscription was lost meanwhile: it looks again every recheck";
}

TEST(acquire_fsm, a_wait_behind_waiters_looks_once_at_its_deadline_if_it_never_tried) {
  const auto deadline = t0 + 200ms;
  acquire_fsm fsm(true, deadline);
  fsm.start(true, t0);
  auto a = fsm.subscribed();
  EXPECT_EQ(a.until, deadline);
  EXPECT_EQ(fsm.timer_fired(a.timer, deadline).what, step::send_try);
  a = fsm.refused(500ms, deadline);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::not_acquired);
  EXPECT_TRUE(a.give_up);

  acquire_fsm unconfirmed(true, deadline);
  a = unconfirmed.start(true, t0);
  EXPECT_EQ(unconfirmed.timer_fired(a.timer, deadline).what, step::send_try)
      << "not confirmed by the deadline: one look all the same";
  EXPECT_EQ(unconfirmed.subscribed().what, step::none) << "a late confirmation changes nothing";
  EXPECT_EQ(unconfirmed.acquired().why, ending::acquired);

  acquire_fsm cancelled(true, std::nullopt);
  cancelled.start(true, t0);
  cancelled.subscribed();
  a = cancelled.cancel();
  EXPECT_EQ(a.why, ending::cancelled);
  EXPECT_FALSE(a.give_up) << "it never tried: nothing of it is on the server";
}

TEST(acquire_fsm, the_holders_ttl_decides_the_sleep) {
  auto fsm = queued_waiter(std::nullopt);
  EXPECT_EQ(fsm.refused(-1ms, t0).until, t0 + acquire_fsm::no_ttl_recheck) << "no TTL: a recheck";
  EXPECT_EQ(fsm.timer(t0 + 1s).what, step::send_try);
  // The holder's last millisecond: PTTL 0 is not "no TTL"; the key is gone by the next try.
  EXPECT_EQ(fsm.refused(0ms, t0).what, step::send_try);
}

TEST(acquire_fsm, the_deadline_caps_every_sleep_and_ends_the_wait) {
  const auto deadline = t0 + 200ms;
  acquire_fsm fsm(true, deadline);
  fsm.start();
  EXPECT_EQ(fsm.refused(10s, t0).until, deadline) << "subscribing is timed by the deadline";
  EXPECT_EQ(fsm.subscribed().what, step::send_try);
  auto a = fsm.refused(10s, t0 + 10ms);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, deadline);
  a = fsm.timer(deadline);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::not_acquired);
  EXPECT_FALSE(a.ec);

  // A refusal that comes back after the deadline ends it too.
  auto late = queued_waiter(deadline);
  EXPECT_EQ(late.refused(10s, deadline + 1ms).why, ending::not_acquired);
  // So does a subscription not confirmed by then.
  acquire_fsm unconfirmed(true, deadline);
  unconfirmed.start();
  unconfirmed.refused(10s, t0);
  EXPECT_EQ(unconfirmed.timer(t0 + 100ms).what, step::none) << "spurious: not yet the deadline";
  EXPECT_EQ(unconfirmed.timer(deadline).why, ending::not_acquired);
}

TEST(acquire_fsm, a_wait_rides_through_an_outage_until_its_deadline) {
  const auto deadline = t0 + 1s;
  auto fsm = queued_waiter(deadline);
  auto a = fsm.failed(errc::connection, true, t0);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + acquire_fsm::retry_after_outage);
  EXPECT_TRUE(a.take_back) << "the lost try may have run";
  EXPECT_EQ(fsm.timer(t0 + 100ms).what, step::send_try);
  // Redis answers again: the outage is over, and the deadline then ends it as "not acquired".
  fsm.refused(10s, t0 + 150ms);
  EXPECT_FALSE(fsm.timer(deadline).ec);

  auto away = queued_waiter(deadline);
  away.failed(errc::timeout, true, t0);
  away.timer(t0 + 100ms);
  a = away.failed(errc::timeout, true, t0 + 900ms);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, deadline) << "capped by the deadline";
  a = away.timer(deadline);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::outage);
  EXPECT_EQ(a.ec, errc::connection) << "the deadline found Redis still away";

  auto last = queued_waiter(deadline);
  a = last.failed(errc::timeout, true, deadline);
  EXPECT_EQ(a.ec, errc::connection);
  EXPECT_TRUE(a.take_back);
}

TEST(acquire_fsm, without_a_wait_an_outage_or_an_error_ends_the_try) {
  acquire_fsm once(false, std::nullopt);
  once.start();
  auto a = once.failed(errc::timeout, true, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::timeout);
  EXPECT_TRUE(a.take_back);

  auto waiting = queued_waiter(std::nullopt);
  a = waiting.failed(errc::wrong_type, false, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::failed);
  EXPECT_EQ(a.ec, errc::wrong_type);
  EXPECT_FALSE(a.take_back) << "the server answered: nothing was taken";
}

TEST(acquire_fsm, cancel_ends_a_wait_at_once_but_a_try_in_flight_decides) {
  auto sleeping = queued_waiter(std::nullopt);
  sleeping.refused(5s, t0);
  auto a = sleeping.cancel();
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::cancelled);

  auto trying = queued_waiter(std::nullopt);
  EXPECT_EQ(trying.cancel().what, step::none);
  EXPECT_EQ(trying.refused(5s, t0).ec, errc::cancelled);

  auto lucky = queued_waiter(std::nullopt);
  lucky.cancel();
  a = lucky.acquired();
  EXPECT_EQ(a.why, ending::acquired) << "a hold taken is reported, not leaked";
  EXPECT_FALSE(a.give_back);

  acquire_fsm before_start(true, std::nullopt);
  EXPECT_EQ(before_start.cancel().ec, errc::cancelled);
  EXPECT_EQ(before_start.start().what, step::none);
}

TEST(acquire_fsm, shutdown_takes_back_what_a_try_in_flight_may_have_taken) {
  auto sleeping = queued_waiter(std::nullopt);
  sleeping.refused(5s, t0);
  auto a = sleeping.shutdown();
  EXPECT_EQ(a.why, ending::shutdown);
  EXPECT_EQ(a.ec, errc::cancelled);

  auto acquired = queued_waiter(std::nullopt);
  EXPECT_EQ(acquired.shutdown().what, step::none);
  a = acquired.acquired();
  EXPECT_EQ(a.ec, errc::cancelled);
  EXPECT_TRUE(a.give_back) << "nobody will hear of the hold";

  auto lost = queued_waiter(std::nullopt);
  lost.shutdown();
  a = lost.failed(errc::cancelled, false, t0);
  EXPECT_EQ(a.ec, errc::cancelled);
  EXPECT_TRUE(a.take_back) << "the connection closed under the try: it may have run";

  auto refused = queued_waiter(std::nullopt);
  refused.shutdown();
  a = refused.refused(5s, t0);
  EXPECT_EQ(a.ec, errc::cancelled);
  EXPECT_FALSE(a.take_back || a.give_back);
}

TEST(acquire_fsm, a_kind_that_waits_by_backoff_never_subscribes_and_backs_off_to_its_cap) {
  acquire_fsm fsm(true, t0 + 10s, acquire_fsm::backoff{10ms, 40ms});
  EXPECT_EQ(fsm.start().what, step::send_try);
  auto now = t0;
  // Each sleep is the delay (doubling to the cap) plus a jitter of up to half of it.
  const std::vector<std::chrono::milliseconds> delays{10ms, 20ms, 40ms, 40ms, 40ms};
  std::set<acquire_fsm::clock::duration> jitters;
  for (auto delay : delays) {
    auto a = fsm.refused(5s, now);
    ASSERT_EQ(a.what, step::sleep) << "delay " << delay.count();
    EXPECT_GE(*a.until - now, delay);
    EXPECT_LE(*a.until - now, delay * 3 / 2);
    jitters.insert(*a.until - now - delay);
    now = *a.until;
    EXPECT_EQ(fsm.timer(now).what, step::send_try);
  }
  EXPECT_GT(jitters.size(), 1u) << "the jitter varies";
  // Never past the holder's TTL (a TTL of 0: at once), nor past the deadline.
  auto a = fsm.refused(15ms, now);
  EXPECT_EQ(*a.until - now, 15ms);
  EXPECT_EQ(fsm.timer(*a.until).what, step::send_try);
  EXPECT_EQ(fsm.refused(0ms, now).what, step::send_try);
  a = fsm.refused(5s, t0 + 10s - 5ms);
  EXPECT_EQ(*a.until, t0 + 10s);
  // Cut short by the deadline: one last look, whose refusal ends the wait.
  EXPECT_EQ(fsm.timer(t0 + 10s).what, step::send_try);
  a = fsm.refused(5s, t0 + 10s + 1ms);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::not_acquired);
}

TEST(acquire_fsm, a_wait_that_ends_without_the_hold_after_a_try_gives_up) {
  // Timed out in the queue: the kind's give-up cleans its place.
  auto fsm = queued_waiter(t0 + 1s);
  auto a = fsm.refused(5s, t0);
  a = fsm.timer(t0 + 1s);
  EXPECT_EQ(a.why, ending::not_acquired);
  EXPECT_TRUE(a.give_up);

  // Cancelled while sleeping, failed by the server: both give up. A single try never queues:
  // nothing to give up.
  auto cancelled = queued_waiter(std::nullopt);
  cancelled.refused(5s, t0);
  EXPECT_TRUE(cancelled.cancel().give_up);
  acquire_fsm once(false, std::nullopt);
  once.start();
  EXPECT_FALSE(once.refused(5s, t0).give_up);
  acquire_fsm failing(true, std::nullopt);
  failing.start();
  EXPECT_TRUE(failing.failed(errc::server_error, false, t0).give_up);

  // Acquired, or cancelled before anything was sent, or acquired at shutdown and given back:
  // nothing to give up.
  acquire_fsm taken(true, std::nullopt);
  taken.start();
  EXPECT_FALSE(taken.acquired().give_up);
  acquire_fsm early(true, std::nullopt);
  EXPECT_FALSE(early.cancel().give_up);
  acquire_fsm late(true, std::nullopt);
  late.start();
  EXPECT_EQ(late.shutdown().what, step::none);
  a = late.acquired();
  EXPECT_TRUE(a.give_back);
  EXPECT_FALSE(a.give_up);
}

TEST(acquire_fsm, a_wait_without_its_subscription_looks_again_every_recheck) {
  acquire_fsm fsm(true, std::nullopt);
  fsm.start();
  EXPECT_EQ(fsm.refused(30s, t0).what, step::subscribe);
  EXPECT_EQ(fsm.subscribed(/*listening=*/false).what, step::send_try);
  auto a = fsm.refused(30s, t0);
  ASSERT_EQ(a.what, step::sleep);
  EXPECT_EQ(*a.until, t0 + acquire_fsm::no_ttl_recheck) << "not the holder's 30 s";
}

TEST(acquire_fsm, an_unacknowledged_try_goes_again_then_fails_with_no_synced_replicas) {
  acquire_fsm once(false, std::nullopt);
  EXPECT_EQ(once.start().what, step::send_try);
  // Each unsynced try pauses, then goes again: three in all.
  auto a = once.unsynced(3, t0);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + acquire_fsm::retry_after_outage);
  EXPECT_EQ(once.timer(t0 + acquire_fsm::retry_after_outage).what, step::send_try);
  EXPECT_EQ(once.unsynced(3, t0).what, step::sleep);
  EXPECT_EQ(once.timer(t0 + acquire_fsm::retry_after_outage).what, step::send_try);
  a = once.unsynced(3, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::no_synced_replicas);

  // A refusal in between is an ordinary refusal; a grant that is acknowledged ends it well.
  acquire_fsm recovered(false, std::nullopt);
  recovered.start();
  recovered.unsynced(3, t0);
  recovered.timer(t0 + acquire_fsm::retry_after_outage);
  EXPECT_EQ(recovered.acquired().why, ending::acquired);
}

TEST(acquire_fsm, a_wait_whose_deadline_finds_writes_unacknowledged_says_so) {
  auto fsm = queued_waiter(t0 + 150ms);
  // A wait with a deadline rides through unacknowledged tries, whatever the attempts.
  EXPECT_EQ(fsm.unsynced(1, t0 + 10ms).what, step::sleep);
  EXPECT_EQ(fsm.timer(t0 + 110ms).what, step::send_try);
  EXPECT_EQ(fsm.unsynced(1, t0 + 100ms).what, step::sleep);
  auto a = fsm.timer(t0 + 150ms);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::no_synced_replicas);
  EXPECT_TRUE(a.give_up);  // it was queued
}

// Take-backs of this owner booked before a try (docs/faults.md, the same-owner race): the try
// waits until each has been sent again and answered.
TEST(acquire_fsm, a_try_waits_for_booked_take_backs_then_goes) {
  acquire_fsm fsm(true, t0 + 5s);
  EXPECT_EQ(fsm.start().what, step::send_try);
  auto a = fsm.take_backs_booked();
  EXPECT_EQ(a.what, step::settle);
  EXPECT_EQ(a.until, t0 + 5s) << "Redis may stay away for the whole wait";
  EXPECT_FALSE(a.take_back) << "no try went out";
  EXPECT_EQ(fsm.woken().what, step::none) << "a wake is no answer";
  EXPECT_EQ(fsm.timer(t0 + 1s).what, step::none) << "before the deadline the timer is stale";
  EXPECT_EQ(fsm.take_back_answered({}, true, t0 + 1s).what, step::send_try);
  EXPECT_EQ(fsm.take_back_answered({}, true, t0 + 1s).what, step::none)
      << "a second report is stale";
  EXPECT_EQ(fsm.acquired().why, ending::acquired);
}

TEST(acquire_fsm, take_backs_unanswered_for_want_of_redis_ride_through_or_end_the_wait) {
  acquire_fsm wait(true, t0 + 5s);
  wait.start();
  wait.take_backs_booked();
  auto a = wait.take_back_answered(errc::timeout, false, t0 + 1s);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + 1s + acquire_fsm::retry_after_outage);
  EXPECT_FALSE(a.take_back);
  EXPECT_EQ(wait.timer(t0 + 1s + acquire_fsm::retry_after_outage).what, step::send_try);
  wait.take_backs_booked();
  // The deadline passes while they are still out.
  a = wait.timer(t0 + 5s);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::outage);
  EXPECT_EQ(a.ec, errc::connection);

  acquire_fsm once(false, std::nullopt);
  once.start();
  once.take_backs_booked();
  a = once.take_back_answered(errc::connection, false, t0);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::connection) << "a single try reports the outage as it is";
}

TEST(acquire_fsm, a_cancel_or_shutdown_while_take_backs_are_out_ends_at_once) {
  acquire_fsm cancelled(true, std::nullopt);
  cancelled.start();
  cancelled.take_backs_booked();
  auto a = cancelled.cancel();
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::cancelled);
  EXPECT_FALSE(a.take_back) << "no try is out";
  EXPECT_EQ(cancelled.take_back_answered({}, true, t0).what, step::none);

  acquire_fsm stopping(true, std::nullopt);
  stopping.start();
  stopping.take_backs_booked();
  a = stopping.shutdown();
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.why, ending::shutdown);
  EXPECT_FALSE(a.give_back);
}

TEST(acquire_fsm, a_try_waits_for_every_copy_and_one_unanswered_copy_holds_it_back) {
  acquire_fsm fsm(true, t0 + 5s);
  fsm.start();
  EXPECT_EQ(fsm.take_backs_booked(3).what, step::settle);
  EXPECT_EQ(fsm.take_back_answered({}, true, t0).what, step::none);
  // A refusal for now (BUSY) is no run: the try waits as after an outage.
  EXPECT_EQ(fsm.take_back_answered(errc::server_error, false, t0).what, step::none);
  auto a = fsm.take_back_answered({}, true, t0 + 10ms);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + 10ms + acquire_fsm::retry_after_outage);
  EXPECT_EQ(fsm.timer(*a.until).what, step::send_try);

  // A copy cut short by the client's own shutdown says nothing of Redis.
  acquire_fsm cut(true, t0 + 5s);
  cut.start();
  cut.take_backs_booked(1);
  EXPECT_EQ(cut.take_back_answered(errc::cancelled, false, t0).what, step::send_try);
}

TEST(acquire_fsm, a_grant_no_replica_acknowledged_goes_back_before_anything_else) {
  auto fsm = queued_waiter(t0 + 5s);
  auto a = fsm.unsynced(3, t0, /*granted=*/true);
  EXPECT_EQ(a.what, step::roll_back);
  EXPECT_EQ(fsm.woken().what, step::none) << "no try while the grant may still be there";
  EXPECT_EQ(fsm.cancel().what, step::none) << "the caller hears once the grant is gone";
  EXPECT_EQ(fsm.timer(t0 + 10s).what, step::none);
  a = fsm.rolled_back(t0 + 10ms);
  EXPECT_EQ(a.what, step::finish);
  EXPECT_EQ(a.ec, errc::cancelled);
  EXPECT_FALSE(a.give_back) << "given back already";

  acquire_fsm again(false, std::nullopt);
  again.start();
  EXPECT_EQ(again.unsynced(2, t0, true).what, step::roll_back);
  a = again.rolled_back(t0 + 5ms);
  EXPECT_EQ(a.what, step::sleep);
  EXPECT_EQ(a.until, t0 + 5ms + acquire_fsm::retry_after_outage);
  EXPECT_EQ(again.timer(*a.until).what, step::send_try);
  EXPECT_EQ(again.unsynced(2, t0, true).what, step::roll_back);
  a = again.rolled_back(t0 + 200ms);
  EXPECT_EQ(a.ec, errc::no_synced_replicas) << "two tries in all";
  EXPECT_EQ(again.rolled_back(t0 + 300ms).what, step::none);

  acquire_fsm stopping(true, std::nullopt);
  stopping.start();
  stopping.unsynced(3, t0, true);
  EXPECT_EQ(stopping.shutdown().what, step::none) << "the rollback is answered first";
  EXPECT_EQ(stopping.rolled_back(t0).why, ending::shutdown);
}

TEST(acquire_fsm, a_timer_that_fires_after_the_machine_moved_on_does_nothing) {
  auto fsm = queued_waiter(std::nullopt);
  const auto first = fsm.refused(5s, t0);
  ASSERT_EQ(first.what, step::sleep);
  ASSERT_NE(first.timer, 0u);
  EXPECT_EQ(fsm.woken().what, step::send_try);
  const auto second = fsm.refused(5s, t0 + 1s);
  EXPECT_NE(second.timer, first.timer);
  EXPECT_EQ(fsm.timer_fired(first.timer, t0 + 5s).what, step::none)
      << "the first sleep's timer, already replaced";
  EXPECT_EQ(fsm.timer_fired(second.timer, t0 + 6s).what, step::send_try);
  EXPECT_EQ(fsm.timer_fired(second.timer, t0 + 6s).what, step::none) << "fired once";
}

TEST(acquire_fsm, a_lost_try_is_taken_back_only_when_it_may_have_taken_something) {
  auto fsm = queued_waiter(t0 + 5s);
  EXPECT_TRUE(fsm.failed(errc::timeout, true, t0).take_back);

  auto reentry = queued_waiter(t0 + 5s);
  EXPECT_FALSE(reentry.failed(errc::timeout, true, t0, /*owner_holds=*/true).take_back)
      << "the take-back would undo the owner's older hold";

  acquire_fsm changes_nothing(true, t0 + 5s, std::nullopt, /*tries_take=*/false);
  changes_nothing.start();
  EXPECT_FALSE(changes_nothing.failed(errc::timeout, true, t0).take_back);

  auto answered = queued_waiter(t0 + 5s);
  EXPECT_FALSE(answered.failed(errc::server_error, false, t0).take_back)
      << "the server said the try did not run";
}
