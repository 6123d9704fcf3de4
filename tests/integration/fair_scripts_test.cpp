// SPDX-License-Identifier: Apache-2.0
// The fair lock's scripts (data-layout §3), driven directly with the keys and arguments its
// kind table sends (src/locks/fair_lock_kind.cpp): a give-up resent under its latch moves
// nobody twice; queues left half-written (an owner without a deadline, a deadline without an
// owner, duplicates, deadlines long past) never make a script fail and never stop the queue
// (redisson/redisson#5989: "arithmetic on a nil value"); data that no fair lock writes is
// refused with WRONGTYPE and left as it was.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "locks/lock_kinds.hpp"
#include "support/lock_env.hpp"
#include "support/raw_subscriber.hpp"
#include "support/sync_calls.hpp"
#include "waiting/lock_kind.hpp"

namespace fair_scripts_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
namespace detail = relock::detail;
namespace layout = relock::layout;

namespace {

const std::string name = "fair";
const std::string queue_key = layout::fair_queue_key(name);
const std::string timeout_key = layout::fair_timeout_key(name);
const std::string channel = layout::lock_channel(name);
constexpr std::chrono::milliseconds queue_timeout{10'000};
constexpr std::chrono::milliseconds latch_ttl{20'000};
const detail::waiting::lock_kind& kind = detail::locks::fair_lock_kind;

struct env {
  redis_server server;
  relock::client client{settings_for(server)};
  raw_client raw = raw_client::to(server);
  relock::exec::executor& ex = relock::detail::core_of(client)->executor();
  std::int64_t now = detail::waiting::wall_clock_ms();
  // The scripts' clock and timeouts; a head told while nobody listens gets `unheard` (0: off).
  std::chrono::milliseconds unheard{0};
  detail::waiting::queue_timing timing() const { return {now, queue_timeout, unheard}; }

  result acquire(const std::string& owner, bool waiting = true, std::int64_t lease = 30'000) {
    auto c = kind.acquire_call(detail::waiting::acquire_context{
        name, owner, std::chrono::milliseconds(lease), waiting, "PUBLISH", timing()});
    return eval(ex, kind.acquire, std::move(c.keys), std::move(c.args));
  }
  result release(const std::string& owner) {
    const std::string latch = layout::unlock_latch_key(name, layout::random_request_id());
    auto c = kind.release_call(detail::waiting::release_context{
        name, owner, channel, latch, "PUBLISH", 30s, latch_ttl, timing()});
    return eval(ex, kind.release, std::move(c.keys), std::move(c.args));
  }
  result give_up(const std::string& owner, const std::string& request) {
    const std::string latch = layout::unlock_latch_key(name, request);
    auto c = kind.give_up_call(detail::waiting::give_up_context{name, owner, channel, latch,
                                                                "PUBLISH", latch_ttl, timing()});
    return eval(ex, *kind.give_up, std::move(c.keys), std::move(c.args));
  }
  result force() {
    auto c = kind.force_release_call(
        detail::waiting::force_release_context{name, channel, "PUBLISH", timing()});
    return eval(ex, kind.force_release, std::move(c.keys), std::move(c.args));
  }

  std::vector<std::string> queue() {
    std::vector<std::string> owners;
    for (auto& e : raw.command({"LRANGE", queue_key, "0", "-1"}).elements) owners.push_back(e.str);
    return owners;
  }
  std::map<std::string, std::int64_t> deadlines() {
    std::map<std::string, std::int64_t> out;
    auto r = raw.command({"ZRANGE", timeout_key, "0", "-1", "WITHSCORES"});
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      out[r.elements[i].str] = std::stoll(r.elements[i + 1].str);
    }
    return out;
  }
  // Everything stored under the fair lock's keys, for "nothing changed".
  std::string dump() {
    std::string out;
    for (const auto& key : {name, queue_key, timeout_key}) {
      auto d = raw.command({"DUMP", key});
      out += key + "=" + (d.is_nil() ? std::string("(none)") : d.str) + ";";
    }
    return out;
  }
};

}  // namespace

TEST(fair_scripts, a_give_up_resent_under_its_latch_moves_nobody_twice) {
  env e;
  ASSERT_TRUE(e.acquire("holder:1").value.is_nil());
  for (const char* w : {"a:1", "b:1", "c:1"}) ASSERT_TRUE(e.acquire(w).value.is_integer());
  const auto before = e.deadlines();
  const std::string request = layout::random_request_id();
  EXPECT_EQ(e.give_up("a:1", request).value.integer, 1);
  auto after = e.deadlines();
  EXPECT_EQ(e.queue(), (std::vector<std::string>{"b:1", "c:1"}));
  EXPECT_EQ(after.count("a:1"), 0u);
  EXPECT_EQ(after["b:1"], before.at("b:1") - queue_timeout.count());
  EXPECT_EQ(after["c:1"], before.at("c:1") - queue_timeout.count());
  // The same request again (a resend after a lost connection): its latch answers.
  EXPECT_EQ(e.give_up("a:1", request).value.integer, 1);
  EXPECT_EQ(e.deadlines(), after);
  // A new request by an owner that is not queued changes nothing either.
  EXPECT_EQ(e.give_up("a:1", layout::random_request_id()).value.integer, 0);
  EXPECT_EQ(e.deadlines(), after);
}

TEST(fair_scripts, the_queue_moves_up_when_its_head_takes_the_lock) {
  env e;
  ASSERT_TRUE(e.acquire("holder:1").value.is_nil());
  ASSERT_TRUE(e.acquire("a:1").value.is_integer());
  ASSERT_TRUE(e.acquire("b:1").value.is_integer());
  const auto before = e.deadlines();
  // Redisson's placement: each a queue timeout after the one before (the first after the
  // holder's lease).
  EXPECT_EQ(before.at("b:1") - before.at("a:1"), queue_timeout.count());
  EXPECT_EQ(e.release("holder:1").value.integer, 1);
  ASSERT_TRUE(e.acquire("a:1").value.is_nil());
  EXPECT_EQ(e.queue(), std::vector<std::string>{"b:1"});
  // Redisson moves it up one queue timeout; relock also starts the new head's turn afresh:
  // the new holder's lease and a queue timeout from now, whichever is later.
  EXPECT_EQ(e.deadlines().at("b:1"), std::max(before.at("b:1") - queue_timeout.count(),
                                              e.now + 30'000 + queue_timeout.count()));
}

// A head told while nobody listened has its deadline brought close; that short deadline must not
// pass to the live waiters queued behind it (they are placed after it, and move up when it
// takes the lock): when the head takes its turn, the next one's turn starts afresh.
TEST(fair_scripts, an_unheard_heads_short_deadline_does_not_pass_to_those_behind) {
  env e;
  e.unheard = 5s;
  ASSERT_TRUE(e.acquire("holder:1").value.is_nil());
  ASSERT_TRUE(e.acquire("head:1").value.is_integer());
  const auto t0 = e.now;
  EXPECT_EQ(e.release("holder:1").value.integer, 1);  // nobody listens on head:1's channel
  EXPECT_LE(e.deadlines().at("head:1"), detail::waiting::wall_clock_ms() + 5'000);
  e.now = t0 + 1'100;
  ASSERT_TRUE(e.acquire("n:1").value.is_integer());
  ASSERT_TRUE(e.acquire("m:1").value.is_integer());
  e.now = t0 + 1'500;
  ASSERT_TRUE(e.acquire("head:1").value.is_nil());  // it was alive after all: its turn
  EXPECT_GE(e.deadlines().at("n:1"), e.now + 30'000 + queue_timeout.count());
  e.now = t0 + 6'010;  // past the first head's short deadline: n:1 looks again
  EXPECT_TRUE(e.acquire("n:1").value.is_integer());
  EXPECT_EQ(e.queue(), (std::vector<std::string>{"n:1", "m:1"})) << "n:1 lost its place";
  // A waiter that tries is alive: even past its own deadline it keeps its place.
  e.now += 10 * queue_timeout.count();
  EXPECT_TRUE(e.acquire("n:1").value.is_integer());
  EXPECT_EQ(e.queue().front(), "n:1");
}

TEST(fair_scripts,
     a_release_that_reads_the_queues_first_two_still_tells_the_one_behind_an_unheard_head) {
  env e;
  e.unheard = 5s;
  ASSERT_TRUE(e.acquire("holder:1").value.is_nil());
  ASSERT_TRUE(e.acquire("head:1").value.is_integer());
  ASSERT_TRUE(e.acquire("next:1").value.is_integer());
  ASSERT_TRUE(e.acquire("holder:1").value.is_nil());  // held twice
  {
    // Counting down changes nobody's place and tells nobody. (A subscriber whose read timed
    // out reads nothing more: the next check listens afresh.)
    raw_subscriber quiet(e.server, channel + ":next:1");
    EXPECT_EQ(e.release("holder:1").value.integer, 0);
    EXPECT_FALSE(quiet.next(100ms).has_value());
  }
  // The full release: nobody hears head:1, so its deadline comes close and next:1 is told.
  raw_subscriber next(e.server, channel + ":next:1");
  EXPECT_EQ(e.release("holder:1").value.integer, 1);
  EXPECT_EQ(next.next(2s), std::optional<std::string>("0"));
  EXPECT_LE(e.deadlines().at("head:1"), detail::waiting::wall_clock_ms() + 5'000);
  EXPECT_EQ(e.queue(), (std::vector<std::string>{"head:1", "next:1"}));
}

TEST(fair_scripts, half_written_queues_never_fail_a_script_nor_stop_the_queue) {
  env e;
  std::mt19937 rng(20261123);
  const std::vector<std::string> owners{"a:1", "b:1", "c:1", "d:1", "e:1"};
  std::set<std::string> holding;
  auto pick = [&] { return owners[rng() % owners.size()]; };
  auto check_after_script = [&](const result& r, const std::string& what,
                                bool strays_repaired = true) {
    ASSERT_FALSE(r.ec && r.value.is_error()) << what << ": " << r.value.str;
    // After any script the head has a deadline that has not passed; after any but a release
    // (whose common case reads the queue's first two: fair_queue.lua's read_release_view)
    // strays are gone too: every deadline belongs to a queued owner.
    auto queue = e.queue();
    std::set<std::string> queued(queue.begin(), queue.end());
    auto deadlines = e.deadlines();
    if (strays_repaired) {
      for (const auto& [owner, deadline] : deadlines) {
        EXPECT_TRUE(queued.count(owner)) << what << ": stray deadline of " << owner;
      }
    }
    if (!queue.empty()) {
      ASSERT_TRUE(deadlines.count(queue.front())) << what << ": head without deadline";
      EXPECT_GT(deadlines.at(queue.front()), e.now) << what << ": dead head kept";
    }
  };
  for (int step = 0; step < 600; ++step) {
    e.now += rng() % 3'000;  // time passes: some deadlines run out
    const std::string owner = pick();
    std::string what = "step " + std::to_string(step) + " ";
    switch (rng() % 9) {
      case 0:  // an owner queued without a deadline
        e.raw.command({"RPUSH", queue_key, owner});
        continue;
      case 1:  // a deadline without a place in the queue
        e.raw.command({"ZADD", timeout_key, std::to_string(e.now + 50'000), owner});
        continue;
      case 2:  // a deadline lost, or long past
        if (rng() % 2) {
          e.raw.command({"ZREM", timeout_key, owner});
        } else {
          e.raw.command({"ZADD", timeout_key, std::to_string(e.now - 1'000'000), owner});
        }
        continue;
      case 3:
      case 4: {
        auto r = e.acquire(owner, rng() % 4 != 0);
        if (!r.ec && r.value.is_nil()) holding.insert(owner);
        check_after_script(r, what + "acquire " + owner);
        break;
      }
      case 5: {
        auto r = e.release(owner);
        if (!r.ec && r.value.is_integer() && r.value.integer == 1) holding.erase(owner);
        check_after_script(r, what + "release " + owner, false);
        break;
      }
      case 6:
      case 7:
        check_after_script(e.give_up(owner, layout::random_request_id()), what + "give up");
        break;
      case 8:
        if (rng() % 4 == 0) {
          check_after_script(e.force(), what + "force");
          holding.clear();
        }
        break;
    }
    if (testing::Test::HasFatalFailure()) return;
  }
  // Whatever was left: once holders release and waiters give up, a newcomer takes it at once.
  for (const auto& owner : owners) {
    while (e.release(owner).value.is_integer()) {
    }
    e.give_up(owner, layout::random_request_id());
  }
  EXPECT_TRUE(e.acquire("newcomer:1").value.is_nil());
  EXPECT_TRUE(e.queue().empty());
  EXPECT_TRUE(e.deadlines().empty());
}

TEST(fair_scripts, data_no_fair_lock_writes_is_refused_and_left_as_it_was) {
  auto refused_everywhere = [](env& e, const char* what) {
    const std::string before = e.dump();
    for (const auto& r : {e.acquire("a:1"), e.acquire("a:1", false), e.release("a:1"),
                          e.give_up("a:1", layout::random_request_id()), e.force()}) {
      EXPECT_TRUE(r.value.is_error()) << what << ": " << relock::resp::to_string(r.value);
      EXPECT_EQ(r.ec, errc::wrong_type) << what << ": " << r.value.str;
    }
    EXPECT_EQ(e.dump(), before) << what << ": changed";
  };
  {
    env e;
    e.raw.command({"SET", queue_key, "not a list"});
    refused_everywhere(e, "queue key holds a string");
  }
  {
    env e;
    e.raw.command({"RPUSH", queue_key, "a:1"});
    e.raw.command({"ZADD", timeout_key, "inf", "a:1"});
    refused_everywhere(e, "a deadline of inf");
  }
  {
    env e;
    e.raw.command({"SADD", timeout_key, "a:1"});
    refused_everywhere(e, "deadlines key holds a set");
  }
  {
    env e;
    e.raw.command({"SET", name, "plain"});
    refused_everywhere(e, "lock key holds a string");
  }
  // Through the public API: a clear error naming what is wrong.
  env e;
  e.raw.command({"RPUSH", queue_key, "a:1"});
  e.raw.command({"ZADD", timeout_key, "-inf", "a:1"});
  try {
    e.client.fair_lock(name).lock();
    FAIL() << "locked over a broken queue";
  } catch (const relock::error& err) {
    EXPECT_EQ(err.code(), errc::wrong_type);
    EXPECT_NE(std::string(err.what()).find("not a time"), std::string::npos) << err.what();
  }
}

}  // namespace fair_scripts_test
