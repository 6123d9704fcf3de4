// SPDX-License-Identifier: Apache-2.0
// relock::semaphore (client::semaphore) against the real Redisson's RSemaphore (getSemaphore, the
// driver's s* commands), once per Redisson version built by tests/interop/redisson/prepare
// (issue #22). Both sides keep the available permits as a string integer under the name and
// publish the new count on redisson_sc:{name} after a release or an add, so permits taken on
// one side are missing on the other, and a release on either side wakes the other side's
// waiters by message.
//
// A relock waiter also looks again every second; every wake-up below comes within
// `by_message` of the release, and the release is sent within a few hundred ms of the waiter
// starting to wait, so a wake by that recheck would show up about a second after the waiter
// began, well past the bound. Redisson's semaphore waiters have no recheck at all: they sleep
// until a message (or their deadline).
//
// Seen with both Redisson versions (and kept out of these tests, which wake one Java async
// waiter per message): one message wakes every sync waiter of a Redisson client but only one of
// its async ones (acquireAsync / tryAcquireAsync); the others sleep to their deadline with the
// permits free. See tests/interop/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <iostream>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/error_of.hpp"
#include "support/wait.hpp"

namespace semaphore_interop_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// A waiter woken by a release message gets its permits within this of the release.
constexpr auto by_message = 500ms;
constexpr double by_message_ms = std::chrono::duration<double, std::milli>(by_message).count();

// Milliseconds from `since` to a driver reply's start_ns.
double ms_to_start(steady::time_point since, const nlohmann::json& reply) {
  return static_cast<double>(reply["start_ns"].get<std::int64_t>() -
                             since.time_since_epoch().count()) /
         1e6;
}

class semaphore_interop : public redisson_fixture {
 protected:
  // The count as Redis holds it ("" when the name holds nothing).
  std::string stored(const std::string& name) { return raw_.command({"GET", name}).str; }
  // Every key on the server, sorted.
  std::vector<std::string> keys() {
    std::vector<std::string> out;
    for (const auto& e : raw_.command({"KEYS", "*"}).elements) out.push_back(e.str);
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

// Permits taken, given back, added and drained on either side are counted once, in the one
// string both sides read.
TEST_P(semaphore_interop, permits_are_counted_across_both_sides) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.semaphore("s");

  ASSERT_EQ(j.call_ok("a", "strysetpermits s 3"), true);
  EXPECT_EQ(stored("s"), "3");
  EXPECT_FALSE(sem.try_set_permits(5));  // set already, by Java
  EXPECT_EQ(sem.available_permits(), 3);

  EXPECT_TRUE(sem.try_acquire(2));
  EXPECT_EQ(j.call_ok("a", "savailable s"), 1);
  EXPECT_EQ(j.call_ok("a", "stryacquire s 2"), false);
  EXPECT_EQ(j.call_ok("a", "stryacquire s 1"), true);
  EXPECT_FALSE(sem.try_acquire(1));
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(stored("s"), "0");

  sem.release(2);
  EXPECT_EQ(j.call_ok("a", "savailable s"), 2);
  EXPECT_EQ(j.call_ok("a", "srelease s 1"), true);
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(j.call_ok("a", "sdrain s"), 3);
  EXPECT_EQ(sem.available_permits(), 0);

  // add_permits may take the count below zero; Java then has nothing to take.
  sem.add_permits(-1);
  EXPECT_EQ(j.call_ok("a", "savailable s"), -1);
  EXPECT_EQ(j.call_ok("a", "stryacquire s 1"), false);
  ASSERT_EQ(j.call_ok("a", "saddpermits s 3"), true);
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(sem.drain_permits(), 2);
  EXPECT_EQ(j.call_ok("a", "savailable s"), 0);
  EXPECT_EQ(stored("s"), "0");

  // Set up by relock first (0 permits is a set count too): Java's trySetPermits is refused.
  auto other = client.semaphore("s0");
  EXPECT_TRUE(other.try_set_permits(0));
  EXPECT_EQ(stored("s0"), "0");
  EXPECT_EQ(j.call_ok("a", "strysetpermits s0 4"), false);
  EXPECT_EQ(j.call_ok("a", "savailable s0"), 0);
  EXPECT_FALSE(other.try_acquire(1));

  // relock's latches (one per granting try, one per release) are gone once their work is done:
  // the two counts are all that is left.
  const std::vector<std::string> counts{"s", "s0"};
  EXPECT_TRUE(wait_until([&] { return keys() == counts; }, 5s)) << ::testing::PrintToString(keys());
}

// A relock waiter for 2 permits sleeps through a Java release of 1 and is woken by the release
// that makes 2, by its message (three rounds).
TEST_P(semaphore_interop, a_java_release_wakes_a_waiting_relock_acquire) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.semaphore("w");
  ASSERT_EQ(j.call_ok("a", "strysetpermits w 0"), true);

  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const auto began = steady::now();
    on_thread<bool> waiter([&sem](std::stop_token stop) { return sem.try_acquire(2, 10s, stop); });
    ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("w")) >= 1; }, 5s));

    ASSERT_EQ(j.call_ok("a", "srelease w 1"), true);  // 1 is not enough for it
    EXPECT_FALSE(waiter.done(150ms));
    EXPECT_EQ(stored("w"), "1");

    auto r = j.call("a", "srelease w 1");
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    ASSERT_TRUE(waiter.done(5s));
    auto [got, at] = waiter.get();
    EXPECT_TRUE(got);
    const double woke_ms = ms_since_start(r, at);
    std::cout << "round " << round << ": Java's release " << ms_to_start(began, r)
              << " ms after the relock waiter began; it acquired " << woke_ms
              << " ms after the release" << std::endl;
    EXPECT_LT(woke_ms, by_message_ms);
    // Its look every second would have come a second after it began at the earliest.
    const double waited_ms = std::chrono::duration<double, std::milli>(at - began).count();
    EXPECT_LT(waited_ms, 1000.0);
    EXPECT_EQ(stored("w"), "0");
  }
}

// A Java tryAcquire waiting (Redisson sleeps until a message) gets its permit at relock's
// release; then an async Java acquire and a sync one are both woken by one relock release of 2.
TEST_P(semaphore_interop, a_relock_release_wakes_waiting_java_acquires) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.semaphore("jw");
  ASSERT_TRUE(sem.try_set_permits(0));
  ASSERT_EQ(j.call_ok("b", "savailable jw"), 0);  // Java warmed up

  auto waiting = j.send("b", "stryacquire jw 1 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("jw")) >= 1; }, 5s));
  EXPECT_THROW(j.wait_reply(waiting, 200ms), std::runtime_error);  // still waiting

  auto released = steady::now();
  sem.release(1);
  auto r = j.wait_reply(waiting, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  const double sync_ms = ms_to_end(released, r);
  EXPECT_LT(sync_ms, by_message_ms);
  EXPECT_EQ(sem.available_permits(), 0);

  // One async and one sync waiter, one release of 2: both get theirs.
  auto async_wait = j.send("c", "sacquireasync jw 1 20000");
  auto sync_wait = j.send("d", "stryacquire jw 1 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("jw")) >= 1; }, 5s));
  EXPECT_THROW(j.wait_reply(async_wait, 200ms), std::runtime_error);

  released = steady::now();
  sem.release(2);
  auto ra = j.wait_reply(async_wait, 5s);
  auto rs = j.wait_reply(sync_wait, 5s);
  EXPECT_EQ(ra["result"], true) << ra.dump();
  EXPECT_EQ(rs["result"], true) << rs.dump();
  std::cout << "Java sync waiter acquired " << sync_ms
            << " ms after relock's release; after a release of 2: async " << ms_to_end(released, ra)
            << " ms, sync " << ms_to_end(released, rs) << " ms" << std::endl;
  EXPECT_LT(ms_to_end(released, ra), by_message_ms);
  EXPECT_LT(ms_to_end(released, rs), by_message_ms);
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(j.call_ok("b", "savailable jw"), 0);
}

// A relock waiter and a Java waiter, one permit each: the first release (relock's) goes to one
// of them, the second (Java's) to the other, each permit once.
TEST_P(semaphore_interop, waiters_of_both_sides_each_get_one_released_permit) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.semaphore("both");
  ASSERT_TRUE(sem.try_set_permits(0));
  ASSERT_EQ(j.call_ok("a", "savailable both"), 0);

  auto java_wait = j.send("b", "stryacquire both 1 20000");
  on_thread<bool> relock_wait(
      [&sem](std::stop_token stop) { return sem.try_acquire(1, 20s, stop); });
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("both")) >= 2; }, 5s));

  sem.release(1);
  // Exactly one of them gets it.
  bool java_first = false;
  ASSERT_TRUE(wait_until(
      [&] {
        if (relock_wait.done()) return true;
        try {
          auto r = j.wait_reply(java_wait, 1ms);
          EXPECT_EQ(r["result"], true) << r.dump();
          java_first = true;
          return true;
        } catch (const std::runtime_error&) {
          return false;
        }
      },
      5s));
  EXPECT_EQ(stored("both"), "0");

  ASSERT_EQ(j.call_ok("a", "srelease both 1"), true);
  if (java_first) {
    ASSERT_TRUE(relock_wait.done(5s));
    EXPECT_TRUE(relock_wait.get().first);
  } else {
    EXPECT_TRUE(relock_wait.get().first);
    auto r = j.wait_reply(java_wait, 5s);
    EXPECT_EQ(r["result"], true) << r.dump();
  }
  std::cout << (java_first ? "Java" : "relock") << "'s waiter got the first permit" << std::endl;
  EXPECT_EQ(stored("both"), "0");
  EXPECT_EQ(sem.available_permits(), 0);
}

// A name that holds nothing: Redisson's acquire waits (for someone to add permits), relock's
// fails with errc::not_initialized unless asked to wait; an add of the other side then wakes it.
TEST_P(semaphore_interop, waiters_on_a_semaphore_never_set_are_woken_by_the_other_sides_add) {
  auto j = java();
  relock::client client(settings());

  auto plain = client.semaphore("absent");
  EXPECT_EQ(error_of([&] { plain.try_acquire(1); }), relock::errc::not_initialized);
  EXPECT_EQ(j.call_ok("a", "stryacquire absent 1"), false);
  EXPECT_FALSE(exists("absent"));

  // Java waits on the absent name; relock's add_permits creates it and wakes Java.
  auto java_wait = j.send("b", "stryacquire absent 1 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("absent")) >= 1; }, 5s));
  auto added = steady::now();
  plain.add_permits(1);
  auto r = j.wait_reply(java_wait, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  const double java_ms = ms_to_end(added, r);
  EXPECT_LT(java_ms, by_message_ms);
  EXPECT_EQ(stored("absent"), "0");

  // relock waits (wait_when_absent) on another absent name; Java's trySetPermits wakes it.
  auto patient = client.semaphore("absent2", {.wait_when_absent = true});
  on_thread<bool> relock_wait(
      [&patient](std::stop_token stop) { return patient.try_acquire(2, 20s, stop); });
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("absent2")) >= 1; }, 5s));
  EXPECT_FALSE(relock_wait.done());
  auto set = j.call("a", "strysetpermits absent2 3");
  EXPECT_EQ(set["result"], true) << set.dump();
  ASSERT_TRUE(relock_wait.done(5s));
  auto [got, at] = relock_wait.get();
  EXPECT_TRUE(got);
  const double relock_ms = ms_since_start(set, at);
  std::cout << "absent semaphore: Java woken " << java_ms << " ms after relock's add, relock "
            << relock_ms << " ms after Java's trySetPermits" << std::endl;
  EXPECT_LT(relock_ms, by_message_ms);
  EXPECT_EQ(j.call_ok("a", "savailable absent2"), 1);
}

INSTANTIATE_TEST_SUITE_P(redisson, semaphore_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });

}  // namespace semaphore_interop_test
