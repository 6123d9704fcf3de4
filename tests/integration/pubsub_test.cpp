#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
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
