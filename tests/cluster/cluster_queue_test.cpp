// SPDX-License-Identifier: Apache-2.0
// The blocking and delayed queues on the shared Redis Cluster, a queue on every master, in each
// pub/sub mode: values taken once each in order, a take waiting on the server (BLPOP) woken by
// another client's offer, and a delayed element reaching a relock consumer promptly whoever
// offered it. Every known producer announces a new head on the delayed queue's channel with a
// classic PUBLISH (relock's delayed_offer.lua, and Redisson 3.18.1's and 4.7.0's offer, read
// from their jars); a transfer that listened only the sharded way (the default on Redis 7) heard
// none of them and delivered on its 1 s recheck. The Redisson producers are emulated here with a
// raw client (the same keys, the same packed element, the same PUBLISH of the due time on the
// same channel: data-layout §9), since the Java driver lives in the interop suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "cluster_env.hpp"

namespace cluster_queue_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

class cluster_queue : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { cluster().restore(); }
  relock::config settings() const { return cluster_settings(GetParam()); }
};

std::string unique_name(const std::string& base) {
  return base + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An offer as a Redisson peer makes it (data-layout §9): the element packed in its version's
// layout, added to the due-time set and the arrival list, and, when it is the earliest, its due
// time announced on the channel with `publish` (Redisson: a hard-coded 'publish').
const char* const peer_offer = R"lua(
local element
if ARGV[4] == '3' then
  element = struct.pack('dLc0', tonumber(ARGV[2]), string.len(ARGV[3]), ARGV[3])
else
  element = struct.pack('Bc0Lc0', string.len(ARGV[2]), ARGV[2], string.len(ARGV[3]), ARGV[3])
end
redis.call('zadd', KEYS[2], ARGV[1], element)
redis.call('rpush', KEYS[3], element)
if redis.call('zrange', KEYS[2], 0, 0)[1] == element then
  redis.call(ARGV[5], KEYS[4], ARGV[1])
end
)lua";

// `layout`: "3" (Redisson 3.18.1) or "4" (4.7.0); `publish`: "publish" (both of them) or
// "spublish" (a producer that would announce sharded).
void offer_as_peer(const std::string& dest, const std::string& value, std::int64_t due_ms,
                   const std::string& layout, const std::string& publish) {
  auto raw = cluster().client(cluster().owner_of(dest));
  const std::string id = layout == "3" ? "4242424242424242" : "abcdefgh";
  auto r = raw.command(
      {"EVAL", peer_offer, "4", dest, "redisson_delay_queue_timeout:{" + dest + "}",
       "redisson_delay_queue:{" + dest + "}", "redisson_delay_queue_channel:{" + dest + "}",
       std::to_string(due_ms), id, value, layout, publish});
  ASSERT_FALSE(r.is_error()) << r.str;
}

// How long after its due time each of `rounds` elements offered by `offer(dest, value, due)`
// reached a relock consumer (its own client, with the delayed queue open), in ms.
template <class Offer>
std::vector<std::int64_t> lateness(const relock::config& c, const std::string& dest, int rounds,
                                   Offer offer) {
  relock::client consumer(c);
  auto transfer = consumer.delayed_queue(dest);
  auto queue = consumer.blocking_queue(dest);
  std::this_thread::sleep_for(200ms);  // the transfer's first run and subscription are done
  std::vector<std::int64_t> late;
  for (int i = 0; i < rounds; ++i) {
    const std::string value = "v" + std::to_string(i);
    const std::int64_t due = wall_ms() + 150;
    offer(dest, value, due);
    auto got = queue.poll(3s);
    const std::int64_t at = wall_ms();
    EXPECT_EQ(got, value);
    late.push_back(at - due);
    // Rounds start at different points of the transfer's 1 s recheck.
    std::this_thread::sleep_for(std::chrono::milliseconds(130 * (i + 1)));
  }
  return late;
}

void expect_prompt(const std::vector<std::int64_t>& late, const std::string& who) {
  std::cout << who << ": ms after the due time:";
  for (auto l : late) std::cout << " " << l;
  std::cout << std::endl;
  // Prompt is a few ms; a missed announcement waits for the transfer's 1 s recheck, 330-720 ms
  // past the due time in these rounds (measured on the transfer that listened sharded only).
  EXPECT_LT(*std::max_element(late.begin(), late.end()), 300) << who;
}

}  // namespace

TEST_P(cluster_queue, values_on_every_master_are_taken_once_each_in_order) {
  relock::client producer(settings()), consumer(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, unique_name("bq"));
    auto out = producer.blocking_queue(name);
    auto in = consumer.blocking_queue(name);
    for (int i = 0; i < 20; ++i) out.offer("e" + std::to_string(i));
    EXPECT_EQ(in.size(), 20);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(in.poll(1s), "e" + std::to_string(i));
    EXPECT_EQ(in.poll(), std::nullopt);
    EXPECT_EQ(cluster().client(master).command({"EXISTS", name}).integer, 0);
  }
}

TEST_P(cluster_queue, a_take_waiting_on_every_master_wakes_on_another_clients_offer) {
  relock::client producer(settings()), consumer(settings());
  for (const auto& master : cluster().masters()) {
    const std::string name = name_on(master, unique_name("bq-wait"));
    auto in = consumer.blocking_queue(name);
    auto taken = std::async(std::launch::async, [&in] { return in.take(); });
    // The take is blocked on the slot's master before the offer goes out.
    auto raw = cluster().client(master);
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (raw.command({"INFO", "clients"}).str.find("blocked_clients:0") != std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), until) << "the take never blocked";
      std::this_thread::sleep_for(5ms);
    }
    const auto offered = std::chrono::steady_clock::now();
    producer.blocking_queue(name).offer("wake");
    ASSERT_EQ(taken.wait_for(2s), std::future_status::ready);
    EXPECT_EQ(taken.get(), "wake");
    EXPECT_LT(std::chrono::steady_clock::now() - offered, 1s);
  }
}

TEST_P(cluster_queue, a_relock_offer_reaches_a_relock_consumer_promptly) {
  relock::client producer(settings());
  for (const auto& master : cluster().masters()) {
    const std::string dest = name_on(master, unique_name("dq"));
    auto delayed = producer.delayed_queue(dest);
    const auto late = lateness(settings(), dest, 4, [&](auto&, auto& value, std::int64_t due) {
      delayed.offer(value, std::chrono::milliseconds(std::max<std::int64_t>(0, due - wall_ms())));
    });
    expect_prompt(late, "relock producer on " + std::to_string(master.port));
  }
}

// A Redisson 3.18.1 producer (classic PUBLISH, even in a cluster) and a relock consumer that
// subscribes sharded by default: the element must come on the announcement, not the recheck.
TEST_P(cluster_queue, a_redisson_3_offer_announced_with_classic_publish_wakes_a_relock_consumer) {
  for (const auto& master : cluster().masters()) {
    const std::string dest = name_on(master, unique_name("dq3"));
    const auto late = lateness(settings(), dest, 5, [](auto& d, auto& value, std::int64_t due) {
      offer_as_peer(d, value, due, "3", "publish");
    });
    expect_prompt(late, "Redisson 3.18.1 producer (PUBLISH) on " + std::to_string(master.port));
  }
}

TEST_P(cluster_queue, a_redisson_4_offer_wakes_a_relock_consumer) {
  const std::string dest = name_on(cluster().masters().front(), unique_name("dq4"));
  const auto late = lateness(settings(), dest, 5, [](auto& d, auto& value, std::int64_t due) {
    offer_as_peer(d, value, due, "4", "publish");
  });
  expect_prompt(late, "Redisson 4.7.0 producer (PUBLISH)");
}

// No Redisson version announces the delayed queue sharded today; a producer that did (SPUBLISH
// on the channel's slot) wakes a relock consumer whose client subscribes sharded.
TEST_P(cluster_queue, a_sharded_announcement_wakes_a_relock_consumer_that_subscribes_sharded) {
  if (GetParam() == "classic") GTEST_SKIP() << "a classic client hears classic messages only";
  const std::string dest = name_on(cluster().masters().back(), unique_name("dqs"));
  const auto late = lateness(settings(), dest, 5, [](auto& d, auto& value, std::int64_t due) {
    offer_as_peer(d, value, due, "4", "spublish");
  });
  expect_prompt(late, "a producer announcing with SPUBLISH");
}

INSTANTIATE_TEST_SUITE_P(pubsub, cluster_queue, ::testing::Values("", "classic", "both"),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("auto") : info.param;
                         });

}  // namespace cluster_queue_test
