// SPDX-License-Identifier: Apache-2.0
// relock's fair lock (client::fair_lock) against the real Redisson's RFairLock (getFairLock), once
// per Redisson version built by tests/interop/redisson/prepare (issue #17): Java and C++ waiters
// share one FIFO queue (redisson_lock_queue:{name}, deadlines in redisson_lock_timeout:{name}),
// get the lock in the order they queued, and each side's release (or force release) tells the
// other side's head waiter on its own channel, redisson_lock__channel:{name}:<owner field>.
//
// relock owners other than the test thread are explicit (relock::owner::unique()) and use the
// async API; Java owners are the driver's labels ("j1", "j2"...), one Java thread each. Every
// hold a test takes lives 30 s (both watchdogs), so a waiter that gets the lock within a second
// of a release heard of it; it did not wait for the TTL.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <system_error>
#include <vector>

#include <asio/use_future.hpp>
#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

using queue_t = std::vector<std::string>;

// The unlock's outcome, as its completion reports it.
std::error_code unlock_ec(relock::mutex& lock, relock::owner who) {
  std::promise<std::error_code> done;
  auto result = done.get_future();
  lock.async_unlock(who, [&done](std::error_code ec) { done.set_value(ec); });
  return result.get();
}

class fair_interop : public redisson_fixture {
 protected:
  static std::string queue_key(const std::string& name) {
    return "redisson_lock_queue:{" + name + "}";
  }
  static std::string timeout_key(const std::string& name) {
    return "redisson_lock_timeout:{" + name + "}";
  }
  // The channel on which a release tells `field`, heading the queue of `name`.
  static std::string waiter_channel(const std::string& name, const std::string& field) {
    return "redisson_lock__channel:{" + name + "}:" + field;
  }

  queue_t queue(const std::string& name) {
    queue_t out;
    for (const auto& e : raw_.command({"LRANGE", queue_key(name), "0", "-1"}).elements) {
      out.push_back(e.str);
    }
    return out;
  }
  std::int64_t deadlines(const std::string& name) {
    return raw_.command({"ZCARD", timeout_key(name)}).integer;
  }
  double deadline_of(const std::string& name, const std::string& field) {
    return std::stod(raw_.command({"ZSCORE", timeout_key(name), field}).str);
  }
  // Waits until `name`'s queue is exactly `expected` (the last one to queue has arrived).
  bool queued(const std::string& name, const queue_t& expected) {
    return wait_until([&] { return queue(name) == expected; }, 10s);
  }
  // A release handed `name` to `holder`, and to it alone; `rest` still queue, in order.
  void expect_handed_to(const std::string& name, const std::string& holder, const queue_t& rest) {
    EXPECT_EQ(hash_of(name), (fields{{holder, "1"}}));
    EXPECT_EQ(queue(name), rest);
  }
  // Waits until `field` alone queues for `name` and listens on its own channel, as its head.
  bool heads_the_queue(const std::string& name, const std::string& field) {
    return queued(name, {field}) &&
           wait_until([&] { return subscribers(waiter_channel(name, field)) == 1; }, 10s);
  }
  // Nothing of `name` is left: no hold, no queue, no deadlines.
  void expect_all_gone(const std::string& name) {
    EXPECT_FALSE(exists(name));
    EXPECT_FALSE(exists(queue_key(name)))
        << "queue left: " << ::testing::PrintToString(queue(name));
    EXPECT_FALSE(exists(timeout_key(name))) << deadlines(name) << " deadlines left";
  }
};

}  // namespace

// relock holds; then J1, C1, J2, C2 queue one after another (each seen in the queue before the
// next starts). Each release, by either language, hands the lock to the next in that order, and
// only to it: the hash names exactly the expected holder and the rest of the queue is unchanged.
TEST_P(fair_interop, java_and_cpp_waiters_get_the_lock_in_the_order_they_queued) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("fifo");
  const auto j1 = j.owner_field("j1");
  const auto j2 = j.owner_field("j2");
  const auto c1 = relock::owner::unique();
  const auto c2 = relock::owner::unique();
  const auto f1 = fair.owner_field(c1);
  const auto f2 = fair.owner_field(c2);
  const auto me = fair.owner_field(relock::owner::current_thread());

  fair.lock();
  auto java1 = j.send("j1", "trylock fair:fifo 60000");
  ASSERT_TRUE(queued("fifo", {j1}));
  auto cpp1 = try_as(fair, c1, 60s);
  ASSERT_TRUE(queued("fifo", {j1, f1}));
  auto java2 = j.send("j2", "trylock fair:fifo 60000");
  ASSERT_TRUE(queued("fifo", {j1, f1, j2}));
  auto cpp2 = try_as(fair, c2, 60s);
  ASSERT_TRUE(queued("fifo", {j1, f1, j2, f2}));
  EXPECT_EQ(deadlines("fifo"), 4);
  EXPECT_EQ(hash_of("fifo"), (fields{{me, "1"}}));
  EXPECT_FALSE(ready(cpp1));
  EXPECT_FALSE(ready(cpp2));

  // relock -> J1.
  auto released = steady::now();
  fair.unlock();
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, java1, released));
  expect_handed_to("fifo", j1, {f1, j2, f2});
  EXPECT_FALSE(ready(cpp1));

  // J1 -> C1.
  released = steady::now();
  ASSERT_EQ(j.call_ok("j1", "unlock fair:fifo"), true);
  ASSERT_NO_FATAL_FAILURE(expect_woken(cpp1, released));
  expect_handed_to("fifo", f1, {j2, f2});
  EXPECT_FALSE(ready(cpp2));

  // C1 -> J2.
  released = steady::now();
  unlock_as(fair, c1);
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, java2, released));
  expect_handed_to("fifo", j2, {f2});
  EXPECT_FALSE(ready(cpp2));

  // J2 -> C2, the last.
  released = steady::now();
  ASSERT_EQ(j.call_ok("j2", "unlock fair:fifo"), true);
  ASSERT_NO_FATAL_FAILURE(expect_woken(cpp2, released));
  expect_handed_to("fifo", f2, {});
  unlock_as(fair, c2);
  expect_all_gone("fifo");
}

// A C++ release tells the Java head waiter on its own channel: it has the lock within a second,
// though the C++ hold had 29 s left.
TEST_P(fair_interop, a_relock_release_wakes_the_queued_java_waiter_on_its_channel) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("to-java");
  const auto ja = j.owner_field("a");

  fair.lock();
  auto waiting = j.send("a", "trylock fair:to-java 20000");
  ASSERT_TRUE(heads_the_queue("to-java", ja));
  auto released = steady::now();
  fair.unlock();
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, waiting, released));
  EXPECT_EQ(hash_of("to-java"), (fields{{ja, "1"}}));
  EXPECT_TRUE(fair.is_held_by(ja));
  EXPECT_EQ(j.call_ok("a", "unlock fair:to-java"), true);
  expect_all_gone("to-java");
}

// A Java release tells the C++ head waiter on its own channel, which relock listens on.
TEST_P(fair_interop, a_java_release_wakes_the_queued_relock_waiter_on_its_channel) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("to-cpp");
  const auto ja = j.owner_field("a");
  const auto c = relock::owner::unique();
  const auto fc = fair.owner_field(c);

  ASSERT_EQ(j.call_ok("a", "lock fair:to-cpp"), true);
  EXPECT_EQ(hash_of("to-cpp"), (fields{{ja, "1"}}));
  auto waiting = try_as(fair, c, 20s);
  ASSERT_TRUE(heads_the_queue("to-cpp", fc));
  EXPECT_FALSE(ready(waiting));
  auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock fair:to-cpp"), true);
  ASSERT_NO_FATAL_FAILURE(expect_woken(waiting, released));
  EXPECT_EQ(hash_of("to-cpp"), (fields{{fc, "1"}}));
  EXPECT_EQ(j.call_ok("b", "islocked fair:to-cpp"), true);
  EXPECT_EQ(j.call_ok("a", "isheld fair:to-cpp"), false);
  unlock_as(fair, c);
  expect_all_gone("to-cpp");
  EXPECT_TRUE(wait_until([&] { return subscribers(waiter_channel("to-cpp", fc)) == 0; }, 5s));
}

// Either side's force release tells the other side's head waiter too.
TEST_P(fair_interop, a_force_unlock_on_either_side_wakes_the_other_sides_queued_waiter) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("forced");
  const auto jb = j.owner_field("b");
  const auto c = relock::owner::unique();
  const auto fc = fair.owner_field(c);

  // relock forces a Java-held lock open; the C++ waiter queued behind it gets it.
  ASSERT_EQ(j.call_ok("a", "lock fair:forced"), true);
  auto cpp = try_as(fair, c, 20s);
  ASSERT_TRUE(heads_the_queue("forced", fc));
  auto forced = steady::now();
  EXPECT_TRUE(fair.force_unlock());
  ASSERT_NO_FATAL_FAILURE(expect_woken(cpp, forced));
  EXPECT_EQ(hash_of("forced"), (fields{{fc, "1"}}));

  // Java forces the C++ hold open; the Java waiter queued behind it gets it.
  auto java_b = j.send("b", "trylock fair:forced 20000");
  ASSERT_TRUE(heads_the_queue("forced", jb));
  forced = steady::now();
  EXPECT_EQ(j.call_ok("a", "forceunlock fair:forced"), true);
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, java_b, forced));
  EXPECT_EQ(hash_of("forced"), (fields{{jb, "1"}}));
  // The C++ owner's hold was taken away: its unlock fails and leaves the Java hold alone.
  const auto ec = unlock_ec(fair, c);
  EXPECT_TRUE(ec == relock::errc::not_owner || ec == relock::errc::lock_lost) << ec.message();
  EXPECT_EQ(hash_of("forced"), (fields{{jb, "1"}}));
  ASSERT_EQ(j.call_ok("b", "unlock fair:forced"), true);
  expect_all_gone("forced");
}

// A waiter that gives up, in either language, leaves the queue at once; those behind it keep
// their order and still get the lock in turn.
TEST_P(fair_interop, waiters_that_give_up_leave_the_queue_and_the_rest_keep_their_order) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("quit");
  const auto j1 = j.owner_field("j1");
  const auto j2 = j.owner_field("j2");
  const auto j3 = j.owner_field("j3");
  const auto c1 = relock::owner::unique();
  const auto c2 = relock::owner::unique();
  const auto f1 = fair.owner_field(c1);
  const auto f2 = fair.owner_field(c2);

  fair.lock();
  auto java1 = j.send("j1", "trylock fair:quit 60000");
  ASSERT_TRUE(queued("quit", {j1}));
  auto quitter_cpp = try_as(fair, c1, 4s);  // gives up while J2 waits behind it
  ASSERT_TRUE(queued("quit", {j1, f1}));
  auto java2 = j.send("j2", "trylock fair:quit 60000");
  ASSERT_TRUE(queued("quit", {j1, f1, j2}));
  auto quitter_java = j.send("j3", "trylock fair:quit 4000");  // gives up while C2 waits
  ASSERT_TRUE(queued("quit", {j1, f1, j2, j3}));
  auto cpp2 = try_as(fair, c2, 60s);
  ASSERT_TRUE(queued("quit", {j1, f1, j2, j3, f2}));

  // Both quitters run out of time and leave; the others stay, in order, deadlines ascending.
  ASSERT_TRUE(ready(quitter_cpp, 10s));
  auto q = quitter_cpp.get();
  EXPECT_FALSE(q.ec) << q.ec.message();
  EXPECT_FALSE(q.acquired);
  auto rq = j.wait_reply(quitter_java, 10s);
  EXPECT_EQ(rq["result"], false) << rq.dump();
  ASSERT_TRUE(queued("quit", {j1, j2, f2}));
  EXPECT_EQ(deadlines("quit"), 3);
  EXPECT_LT(deadline_of("quit", j1), deadline_of("quit", j2));
  EXPECT_LT(deadline_of("quit", j2), deadline_of("quit", f2));

  // The rest get the lock in their order: J1, J2, C2.
  fair.unlock();
  auto r1 = j.wait_reply(java1, 10s);
  ASSERT_EQ(r1["result"], true) << r1.dump();
  EXPECT_EQ(hash_of("quit"), (fields{{j1, "1"}}));
  ASSERT_EQ(j.call_ok("j1", "unlock fair:quit"), true);
  auto r2 = j.wait_reply(java2, 10s);
  ASSERT_EQ(r2["result"], true) << r2.dump();
  EXPECT_EQ(hash_of("quit"), (fields{{j2, "1"}}));
  EXPECT_FALSE(ready(cpp2));
  ASSERT_EQ(j.call_ok("j2", "unlock fair:quit"), true);
  ASSERT_NO_FATAL_FAILURE(expect_acquired(cpp2));
  EXPECT_EQ(hash_of("quit"), (fields{{f2, "1"}}));
  unlock_as(fair, c2);
  expect_all_gone("quit");
}

// The lock is free but a waiter heads the queue (its holder vanished without a word: the hash
// deleted by hand, so nobody was told and the head sleeps on). A newcomer of either language,
// trying at once or waiting a little, is refused and leaves the queue as it found it. Both
// ways: a C++ head with Java newcomers, a Java head with C++ ones.
TEST_P(fair_interop, newcomers_of_either_language_do_not_barge_past_the_queued_head) {
  auto j = java();
  relock::client client(settings());
  auto fair = client.fair_lock("nb");
  const auto c = relock::owner::unique();
  const auto fc = fair.owner_field(c);
  const auto jh = j.owner_field("head");

  // A C++ head. Redisson's newcomer that gives up tells nobody: the head sleeps on until told.
  ASSERT_EQ(j.call_ok("holder", "lock fair:nb 30000"), true);
  const auto scripts_before = script_calls();
  auto cpp_head = try_as(fair, c, 30s);
  ASSERT_TRUE(heads_the_queue("nb", fc));
  // Its try after subscribing has been answered too, so it sleeps now: that try, landing after
  // the DEL below, would find the lock free and take it as the head.
  ASSERT_TRUE(wait_until([&] { return script_calls() - scripts_before >= 2; }, 10s));
  raw_.command({"DEL", "nb"});
  EXPECT_EQ(j.call_ok("n", "trylock fair:nb 0"), false);
  auto waited = j.call("n", "trylock fair:nb 300");
  EXPECT_EQ(waited["result"], false) << waited.dump();
  EXPECT_FALSE(exists("nb"));
  EXPECT_EQ(queue("nb"), (queue_t{fc}));
  EXPECT_EQ(deadlines("nb"), 1);
  EXPECT_FALSE(ready(cpp_head));
  raw_.command({"PUBLISH", waiter_channel("nb", fc), "0"});  // what a release would have said
  ASSERT_NO_FATAL_FAILURE(expect_acquired(cpp_head));
  EXPECT_EQ(hash_of("nb"), (fields{{fc, "1"}}));
  unlock_as(fair, c);
  expect_all_gone("nb");

  // A Java head, behind a C++ hold with a 30 s lease (no watchdog to notice the deletion).
  // relock's newcomer, finding the lock free while the head is somebody else's, does not take it
  // but tells the head, which takes it at once (Redisson's newcomer would leave it asleep).
  const auto h = relock::owner::unique();
  relock::lock_options leased;
  leased.lease = 30s;
  fair.async_lock(h, leased, asio::use_future).get();
  auto java_head = j.send("head", "trylock fair:nb 30000");
  ASSERT_TRUE(heads_the_queue("nb", jh));
  raw_.command({"DEL", "nb"});
  const auto told = steady::now();
  EXPECT_FALSE(fair.try_lock());
  ASSERT_NO_FATAL_FAILURE(expect_java_woken(j, java_head, told));
  EXPECT_EQ(hash_of("nb"), (fields{{jh, "1"}}));
  // A waiting newcomer queues behind the Java holder, and leaves no trace when it gives up.
  // (The give-up goes out before the caller hears; it may reach Redis just after this reader.)
  EXPECT_FALSE(fair.try_lock(300ms));
  EXPECT_TRUE(wait_until([&] { return queue("nb").empty() && deadlines("nb") == 0; }, 5s));
  ASSERT_EQ(j.call_ok("head", "unlock fair:nb"), true);
  expect_all_gone("nb");
}

INSTANTIATE_TEST_SUITE_P(redisson, fair_interop, ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
