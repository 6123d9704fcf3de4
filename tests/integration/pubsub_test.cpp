// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "support/busy_script.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::pubsub::event;
using relock::pubsub::event_kind;
using relock::pubsub::subscription;
using relock::test::redis_server;
using relock::test::settings_for;
using relock::test::wait_until;

namespace {

// Collects what a listener hears, thread-safely.
struct inbox {
  std::mutex m;
  std::vector<std::string> messages;
  int resubscribed = 0;
  int disconnected = 0;

  relock::pubsub::listener_function listener() {
    return [this](const event& e) {
      std::lock_guard g(m);
      switch (e.kind) {
        case event_kind::message:
          messages.emplace_back(e.payload);
          break;
        case event_kind::resubscribed:
          ++resubscribed;
          break;
        case event_kind::disconnected:
          ++disconnected;
          break;
      }
    };
  }
  bool has(const std::string& payload) {
    std::lock_guard g(m);
    return std::find(messages.begin(), messages.end(), payload) != messages.end();
  }
  std::size_t count() {
    std::lock_guard g(m);
    return messages.size();
  }
  int resubscriptions() {
    std::lock_guard g(m);
    return resubscribed;
  }
  int disconnections() {
    std::lock_guard g(m);
    return disconnected;
  }
};

subscription subscribe(relock::client& c, const std::string& channel, inbox& box) {
  std::promise<std::pair<std::error_code, subscription>> done;
  relock::detail::core_of(c)->subscriber().subscribe(channel, box.listener(),
                                                     [&](std::error_code ec, subscription s) {
                                                       done.set_value({ec, std::move(s)});
                                                     });
  auto [ec, s] = done.get_future().get();
  EXPECT_FALSE(ec) << ec.message();
  return std::move(s);
}

std::int64_t subscribers_of(relock::test::raw_client& raw, const std::string& channel) {
  return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
}

std::size_t channel_count(relock::client& c) {
  std::promise<std::size_t> n;
  asio::post(relock::detail::core_of(c)->io(),
             [&] { n.set_value(relock::detail::core_of(c)->subscriber().channel_count()); });
  return n.get_future().get();
}

}  // namespace

TEST(pubsub, confirmed_subscription_hears_messages) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = relock::test::raw_client::to(server);
  inbox box;
  auto s = subscribe(client, "ch", box);
  // Confirmed means the server already counts us: a publish now must arrive.
  EXPECT_EQ(subscribers_of(raw, "ch"), 1);
  EXPECT_EQ(raw.command({"PUBLISH", "ch", "0"}).integer, 1);
  EXPECT_TRUE(wait_until([&] { return box.has("0"); }, 5s));
}

TEST(pubsub, one_server_subscription_per_channel_released_by_the_last_handle) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = relock::test::raw_client::to(server);
  inbox a, b;
  auto first = subscribe(client, "shared", a);
  auto second = subscribe(client, "shared", b);
  EXPECT_EQ(subscribers_of(raw, "shared"), 1);
  raw.command({"PUBLISH", "shared", "hello"});
  EXPECT_TRUE(wait_until([&] { return a.has("hello") && b.has("hello"); }, 5s));

  first.reset();
  raw.command({"PUBLISH", "shared", "second"});
  EXPECT_TRUE(wait_until([&] { return b.has("second"); }, 5s));
  EXPECT_FALSE(a.has("second"));
  EXPECT_EQ(subscribers_of(raw, "shared"), 1);

  second.reset();
  EXPECT_TRUE(wait_until([&] { return subscribers_of(raw, "shared") == 0; }, 5s));
  EXPECT_TRUE(wait_until([&] { return channel_count(client) == 0; }, 5s));
}

TEST(pubsub, subscribing_again_while_unsubscribing_keeps_the_channel) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = relock::test::raw_client::to(server);
  inbox a, b;
  for (int i = 0; i < 50; ++i) {
    auto s = subscribe(client, "flip", a);
    s.reset();  // UNSUBSCRIBE goes out; the next subscribe races it
  }
  auto kept = subscribe(client, "flip", b);
  EXPECT_EQ(subscribers_of(raw, "flip"), 1);
  raw.command({"PUBLISH", "flip", "still-here"});
  EXPECT_TRUE(wait_until([&] { return b.has("still-here"); }, 5s));
}

TEST(pubsub, resubscribes_after_a_restart_and_tells_the_listener) {
  redis_server server;
  auto c = settings_for(server);
  relock::client client(c);
  inbox box;
  auto s = subscribe(client, "survivor", box);

  server.kill();
  server.start();
  auto raw = relock::test::raw_client::to(server);
  ASSERT_TRUE(wait_until([&] { return subscribers_of(raw, "survivor") == 1; }, 10s));
  EXPECT_TRUE(wait_until([&] { return box.resubscriptions() == 1; }, 5s));
  EXPECT_EQ(box.disconnections(), 1);
  raw.command({"PUBLISH", "survivor", "after-restart"});
  EXPECT_TRUE(wait_until([&] { return box.has("after-restart"); }, 5s));
}

TEST(pubsub, many_distinct_channels_leave_nothing_behind) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = relock::test::raw_client::to(server);
  inbox box;
  for (int i = 0; i < 1000; ++i) {
    auto s = subscribe(client, "ch" + std::to_string(i), box);
  }
  EXPECT_TRUE(wait_until([&] { return channel_count(client) == 0; }, 10s));
  EXPECT_TRUE(wait_until(
      [&] {
        return raw.command({"PUBSUB", "CHANNELS"}).elements.empty();
      },
      10s));
}

namespace {

std::size_t refusals(relock::client& c) {
  std::promise<std::size_t> n;
  asio::post(relock::detail::core_of(c)->io(),
             [&] { n.set_value(relock::detail::core_of(c)->subscriber().refusals()); });
  return n.get_future().get();
}

redis_server busy_capable_server() {
  return redis_server({.extra_config = {"busy-reply-threshold 100"}});
}

}  // namespace

// A SUBSCRIBE answered -BUSY used to be dropped: the channel stayed "subscribing" with nothing
// on its way, and every later waiter on it stayed deaf until the connection dropped (the fault
// suite's lost wake-ups after busy_script).
TEST(pubsub, a_subscribe_refused_while_a_script_runs_is_asked_again) {
  redis_server server = busy_capable_server();
  relock::client client(settings_for(server));
  inbox box;
  std::promise<std::error_code> confirmed;
  subscription s;
  {
    relock::test::busy_script busy(server);
    ASSERT_TRUE(busy.wait_until_busy());
    relock::detail::core_of(client)->subscriber().subscribe(
        "refused", box.listener(), [&](std::error_code ec, subscription got) {
          s = std::move(got);
          confirmed.set_value(ec);
        });
    ASSERT_TRUE(wait_until([&] { return refusals(client) >= 1; }, 5s));
  }
  // Asked again once the script is gone, within the confirmation's time.
  EXPECT_FALSE(confirmed.get_future().get());
  auto raw = relock::test::raw_client::to(server);
  EXPECT_EQ(subscribers_of(raw, "refused"), 1);
  raw.command({"PUBLISH", "refused", "heard"});
  EXPECT_TRUE(wait_until([&] { return box.has("heard"); }, 5s));
}

// A refused UNSUBSCRIBE leaves the channel subscribed on the server: the next listener is
// confirmed on it, and once nobody listens it is left after all.
TEST(pubsub, an_unsubscribe_refused_while_a_script_runs_keeps_the_channel_for_the_next_listener) {
  redis_server server = busy_capable_server();
  relock::client client(settings_for(server));
  inbox first, second;
  auto s = subscribe(client, "kept", first);
  {
    relock::test::busy_script busy(server);
    ASSERT_TRUE(busy.wait_until_busy());
    s.reset();
    ASSERT_TRUE(wait_until([&] { return refusals(client) >= 1; }, 5s));
  }
  auto raw = relock::test::raw_client::to(server);
  auto again = subscribe(client, "kept", second);
  raw.command({"PUBLISH", "kept", "still"});
  EXPECT_TRUE(wait_until([&] { return second.has("still"); }, 5s));
  again.reset();
  EXPECT_TRUE(wait_until([&] { return subscribers_of(raw, "kept") == 0; }, 5s));
  EXPECT_TRUE(wait_until([&] { return channel_count(client) == 0; }, 5s));

  // Nobody joins this time: the channel is left once the server takes commands again.
  auto lone = subscribe(client, "left", first);
  {
    relock::test::busy_script busy(server);
    ASSERT_TRUE(busy.wait_until_busy());
    lone.reset();
    ASSERT_TRUE(wait_until([&] { return refusals(client) >= 2; }, 5s));
  }
  EXPECT_TRUE(wait_until([&] { return subscribers_of(raw, "left") == 0; }, 5s));
  EXPECT_TRUE(wait_until([&] { return channel_count(client) == 0; }, 5s));
}
