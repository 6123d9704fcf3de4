// SPDX-License-Identifier: Apache-2.0
// relock::blocking_queue against the real Redisson's RBlockingQueue (getBlockingQueue with
// StringCodec, the driver's q* commands), once per Redisson version built by
// tests/interop/redisson/prepare. Both sides keep the queue as a plain Redis list of the values'
// bytes under its name: offer is RPUSH, take is BLPOP, so a value either side offers is taken
// once, by whichever side asks first, and a take waiting on the server wakes at the other side's
// offer.
//
// How Redisson's queue behaves (seen with MONITOR, 3.18.1 and 4.7.0 alike): offer = RPUSH,
// take = BLPOP NAME 0, size = LLEN, poll(wait) = BLPOP NAME <whole seconds>: a wait under a
// second is sent as 1 s and longer ones are truncated (1500 ms waits 1 s), so the tests wait
// with take, never with a sub-second qpoll.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <relock/blocking_queue.hpp>
#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// A take waiting on the server that gets its value within this after the offer was woken by the
// offer (BLPOP), not by some poll.
constexpr auto promptly = 1s;

// "zürich" in UTF-8: what StringCodec writes for it and what relock hands over, byte for byte.
const std::string umlaut = "z\xc3\xbcrich";

// What a take on a thread of its own got, and when it returned.
struct taken {
  std::string value;
  steady::time_point at;
};

// queue.take() on a thread of its own. Leaving the scope stops a take still waiting (it ends with
// errc::cancelled) and waits for its thread, so a failed test never hangs on it.
class waiting_take {
 public:
  explicit waiting_take(relock::blocking_queue& queue)
      : result_(std::async(std::launch::async, [&queue, stop = stop_.get_token()] {
          auto value = queue.take(stop);
          return taken{std::move(value), steady::now()};
        })) {}
  ~waiting_take() {
    stop_.request_stop();
    if (result_.valid()) result_.wait();
  }
  waiting_take(const waiting_take&) = delete;
  waiting_take& operator=(const waiting_take&) = delete;

  bool done(std::chrono::milliseconds within = 0ms) {
    return result_.wait_for(within) == std::future_status::ready;
  }
  taken get() { return result_.get(); }

 private:
  std::stop_source stop_;
  std::future<taken> result_;
};

class queue_interop : public redisson_fixture {
 protected:
  // The list as Redis holds it, head first.
  std::vector<std::string> list(const std::string& key) {
    std::vector<std::string> out;
    for (const auto& e : raw_.command({"LRANGE", key, "0", "-1"}).elements) out.push_back(e.str);
    return out;
  }
  // Connections blocked in a command (BLPOP here): a take of either language waiting.
  std::int64_t blocked_clients() {
    const auto info = raw_.command({"INFO", "clients"}).str;
    const std::string field = "blocked_clients:";
    const auto at = info.find(field);
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size()));
  }
};

}  // namespace

// Java offers several values; relock's take gets them in order, each once, and leaves the list
// gone (as both sides leave an emptied list).
TEST_P(queue_interop, java_offers_reach_relocks_take_in_order_each_once) {
  auto j = java();
  relock::client client(settings());
  auto queue = client.blocking_queue("jq");
  const std::vector<std::string> values{"one", "two", umlaut, "four", "5"};

  for (const auto& v : values) ASSERT_EQ(j.call_ok("a", "qoffer jq " + v), true) << v;
  EXPECT_EQ(list("jq"), values);  // the plain bytes, no codec envelope
  EXPECT_EQ(queue.size(), 5);

  for (const auto& v : values) EXPECT_EQ(queue.take(), v);
  EXPECT_FALSE(exists("jq"));
  EXPECT_EQ(queue.poll(), std::nullopt);
  EXPECT_EQ(j.call_ok("a", "qsize jq"), 0);
}

// relock offers; Java's take gets each value, in order, and the list is gone after the last.
TEST_P(queue_interop, relocks_offers_reach_javas_take_in_order_each_once) {
  auto j = java();
  relock::client client(settings());
  auto queue = client.blocking_queue("cq");

  EXPECT_TRUE(queue.offer("first"));
  EXPECT_TRUE(queue.offer(umlaut));
  EXPECT_EQ(list("cq"), (std::vector<std::string>{"first", umlaut}));
  EXPECT_EQ(j.call_ok("a", "qsize cq"), 2);

  EXPECT_EQ(j.call_ok("a", "qtake cq"), "first");
  EXPECT_EQ(j.call_ok("a", "qtake cq"), umlaut);
  EXPECT_FALSE(exists("cq"));
  EXPECT_EQ(queue.size(), 0);
}

// relock's take waiting on the server (BLPOP) wakes at a Java offer, at once.
TEST_P(queue_interop, a_waiting_relock_take_is_woken_by_a_java_offer) {
  auto j = java();
  relock::client client(settings());
  auto queue = client.blocking_queue("wq");
  ASSERT_EQ(j.call_ok("a", "qsize wq"), 0);  // Java warmed up: its offer below is just an RPUSH

  waiting_take take(queue);
  ASSERT_TRUE(wait_until([&] { return blocked_clients() >= 1; }, 5s));
  EXPECT_FALSE(take.done());

  const auto offered = steady::now();
  ASSERT_EQ(j.call_ok("a", "qoffer wq hello"), true);
  ASSERT_TRUE(take.done(5s));
  auto got = take.get();
  EXPECT_EQ(got.value, "hello");
  EXPECT_LT(got.at - offered, promptly);
  EXPECT_FALSE(exists("wq"));
  EXPECT_EQ(j.call_ok("a", "qsize wq"), 0);
}

// Java's take waiting on the server wakes at relock's offer, at once.
TEST_P(queue_interop, a_waiting_java_take_is_woken_by_a_relock_offer) {
  auto j = java();
  relock::client client(settings());
  auto queue = client.blocking_queue("wq");
  ASSERT_EQ(j.call_ok("a", "qsize wq"), 0);

  auto waiting = j.send("a", "qtake wq");
  ASSERT_TRUE(wait_until([&] { return blocked_clients() >= 1; }, 5s));

  const auto offered = steady::now();
  EXPECT_TRUE(queue.offer(umlaut));
  auto r = j.wait_reply(waiting, 5s);
  EXPECT_EQ(r["result"], umlaut) << r.dump();
  EXPECT_LT(ns_after(offered, r), std::chrono::nanoseconds(promptly).count());
  EXPECT_FALSE(exists("wq"));
  EXPECT_EQ(queue.size(), 0);
}

// A Java take and a relock take both waiting: one offer from each side, and each value reaches
// exactly one of them.
TEST_P(queue_interop, waiting_takes_of_both_sides_get_one_value_each) {
  auto j = java();
  relock::client client(settings());
  auto queue = client.blocking_queue("bq");
  ASSERT_EQ(j.call_ok("a", "qsize bq"), 0);
  ASSERT_EQ(j.call_ok("b", "qsize bq"), 0);

  auto java_take = j.send("a", "qtake bq");
  waiting_take relock_take(queue);
  ASSERT_TRUE(wait_until([&] { return blocked_clients() >= 2; }, 5s));

  ASSERT_EQ(j.call_ok("b", "qoffer bq from-java"), true);
  EXPECT_TRUE(queue.offer("from-relock"));
  auto r = j.wait_reply(java_take, 5s);
  ASSERT_TRUE(relock_take.done(5s));
  const auto java_got = r["result"].get<std::string>();
  const auto relock_got = relock_take.get().value;
  EXPECT_NE(java_got, relock_got);
  EXPECT_TRUE(java_got == "from-java" || java_got == "from-relock") << java_got;
  EXPECT_TRUE(relock_got == "from-java" || relock_got == "from-relock") << relock_got;
  EXPECT_FALSE(exists("bq"));
}

INSTANTIATE_TEST_SUITE_P(redisson, queue_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
