// SPDX-License-Identifier: Apache-2.0
// blocking_queue on a real server: Redisson's list data, offer/poll/take and friends, waits that
// ride through a killed connection and a restarted server, stops, and bad input.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// True once some connection of the server waits in BLPOP (a take blocked on the server).
bool a_take_waits(raw_client& raw) {
  return wait_until(
      [&] {
        return raw.command({"CLIENT", "LIST"}).str.find("cmd=blpop") != std::string::npos;
      },
      5s);
}

}  // namespace

TEST(blocking_queue, offer_poll_peek_size_remove_clear_on_redissons_list) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto q = client.blocking_queue("jobs");
  EXPECT_FALSE(q.poll().has_value());
  EXPECT_TRUE(q.offer("a"));
  EXPECT_TRUE(q.offer(std::string("b\0c", 3)));
  EXPECT_TRUE(q.offer("a"));
  EXPECT_EQ(raw.command({"LRANGE", "jobs", "0", "-1"}).elements.size(), 3u);
  EXPECT_EQ(q.size(), 3);
  EXPECT_EQ(q.peek(), "a");
  EXPECT_TRUE(q.remove("a"));  // the first one
  EXPECT_EQ(q.poll(), std::string("b\0c", 3));
  EXPECT_EQ(q.poll(), "a");
  EXPECT_FALSE(q.remove("zzz"));
  q.offer("x");
  EXPECT_TRUE(q.clear());
  EXPECT_FALSE(q.clear());
  EXPECT_EQ(raw.command({"EXISTS", "jobs"}).integer, 0);
}

// Replies many times larger than a connection's read buffer (16 KiB), several back to back, on
// a command connection and on a take's: each comes back whole and in its place.
TEST(blocking_queue, elements_larger_than_a_read_buffer_come_back_whole) {
  redis_server server;
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("big");
  std::vector<std::string> sent;
  for (char c : {'a', 'b', 'c', 'd'}) {
    sent.emplace_back(300 * 1024 + c, c);
    ASSERT_TRUE(q.offer(sent.back()));
  }
  // Four polls of one key share a connection, in order: their replies arrive back to back.
  std::vector<std::future<std::optional<std::string>>> polls;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    polls.push_back(q.async_poll(std::nullopt, {}, asio::use_future));
  }
  for (std::size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(polls[i].get(), sent[i]) << i;
  // And on a take's connection of its own.
  ASSERT_TRUE(q.offer(sent.back()));
  EXPECT_EQ(q.take(), sent.back());
  EXPECT_EQ(q.size(), 0);
}

TEST(blocking_queue, take_waits_for_an_offer_from_another_client_without_stalling_locks) {
  redis_server server;
  relock::client consumer(settings_for(server)), producer(settings_for(server));
  auto q = consumer.blocking_queue("q");
  auto taken = std::async(std::launch::async, [&] { return q.take(); });
  auto raw = raw_client::to(server);
  // The take blocks on a connection of its own: the client's locks still answer at once.
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"CLIENT", "LIST", "TYPE", "normal"}).str.find("cmd=blpop") !=
               std::string::npos;
      },
      5s));
  const auto started = std::chrono::steady_clock::now();
  auto l = consumer.lock("beside");
  l.lock();
  l.unlock();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  producer.blocking_queue("q").offer("hello");
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(taken.get(), "hello");
}

TEST(blocking_queue, poll_with_a_wait_ends_on_time_with_nothing) {
  redis_server server;
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("empty");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(q.poll(300ms).has_value());
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1500ms);
  q.offer("late");
  EXPECT_EQ(q.poll(1s), "late");  // nothing was lost to the ended wait
}

TEST(blocking_queue, a_stop_ends_a_take_and_the_next_element_is_not_lost) {
  redis_server server;
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("s");
  std::stop_source stop;
  auto taken =
      std::async(std::launch::async, [&] { return error_of([&] { q.take(stop.get_token()); }); });
  auto raw = raw_client::to(server);
  ASSERT_TRUE(a_take_waits(raw));
  stop.request_stop();
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(taken.get(), relock::errc::cancelled);
  q.offer("kept");
  // The unblocked BLPOP took nothing: the element is there for the next take.
  EXPECT_TRUE(wait_until([&] { return q.size() == 1; }, 2s));
  EXPECT_EQ(q.poll(1s), "kept");
}

TEST(blocking_queue, a_take_rides_through_client_kill_and_gets_the_next_element_once) {
  redis_server server;
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("k");
  auto taken = std::async(std::launch::async, [&] { return q.take(); });
  auto raw = raw_client::to(server);
  ASSERT_TRUE(a_take_waits(raw));
  raw.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  // It waits again once reconnected.
  ASSERT_TRUE(a_take_waits(raw));
  raw.command({"RPUSH", "k", "one", "two"});
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(taken.get(), "one");
  EXPECT_EQ(raw.command({"LRANGE", "k", "0", "-1"}).elements.size(), 1u);  // "two" untouched
}

TEST(blocking_queue, a_take_rides_through_a_server_restart_with_aof) {
  redis_server server({.extra_config = {"appendonly yes", "appendfsync always"}});
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("r");
  q.offer("before");
  EXPECT_EQ(q.take(), "before");
  auto taken = std::async(std::launch::async, [&] { return q.take(); });
  {
    auto raw = raw_client::to(server);
    ASSERT_TRUE(a_take_waits(raw));
  }
  server.kill();
  server.start();
  auto raw = raw_client::to(server);
  // Refused (-LOADING) while the AOF loads: the fixture waits for the load, and this says so.
  ASSERT_EQ(raw.command({"RPUSH", "r", "after"}).integer, 1);
  ASSERT_EQ(taken.wait_for(15s), std::future_status::ready);
  EXPECT_EQ(taken.get(), "after");
  EXPECT_EQ(raw.command({"EXISTS", "r"}).integer, 0);
}

TEST(blocking_queue, bad_input_is_refused_clearly_and_changes_nothing) {
  redis_server server;
  auto cfg = settings_for(server);
  cfg.max_value_size = 10;
  relock::client client(cfg);
  auto raw = raw_client::to(server);
  EXPECT_EQ(error_of([&] { client.blocking_queue(""); }), relock::errc::invalid_argument);
  auto q = client.blocking_queue("typed");
  EXPECT_EQ(error_of([&] { q.offer(std::string(11, 'x')); }), relock::errc::invalid_argument);
  EXPECT_EQ(raw.command({"EXISTS", "typed"}).integer, 0);
  EXPECT_EQ(error_of([&] { q.poll(-1ms); }), relock::errc::invalid_argument);
  raw.command({"SET", "typed", "a string"});
  EXPECT_EQ(error_of([&] { q.offer("v"); }), relock::errc::wrong_type);
  EXPECT_EQ(error_of([&] { q.poll(); }), relock::errc::wrong_type);
  EXPECT_EQ(error_of([&] { q.take(); }), relock::errc::wrong_type);
  EXPECT_EQ(error_of([&] { q.clear(); }), relock::errc::wrong_type);
  EXPECT_EQ(raw.command({"GET", "typed"}).str, "a string");
  auto too_big = settings_for(server);
  too_big.max_value_size = 0;
  EXPECT_EQ(error_of([&] { relock::client c(too_big); }), relock::errc::invalid_argument);
}

TEST(blocking_queue, async_poll_and_offer_with_futures) {
  redis_server server;
  relock::client client(settings_for(server));
  auto q = client.blocking_queue("a");
  auto got = q.async_poll(2s, {}, asio::use_future);
  q.async_offer("v", asio::use_future).get();
  EXPECT_EQ(got.get(), "v");
  EXPECT_FALSE(q.async_poll(std::chrono::milliseconds(0), {}, asio::use_future).get());
}

// A take the server refuses for good says what the server said (here an ACL that forbids BLPOP),
// instead of only the error code's generic words.
TEST(blocking_queue, a_refused_take_keeps_the_servers_words) {
  redis_server server;
  raw_client admin = raw_client::to(server);
  ASSERT_EQ(
      admin.command({"ACL", "SETUSER", "taker", "on", ">pw", "~*", "&*", "+@all", "-blpop"}).str,
      "OK");
  relock::config settings;
  settings.url = "redis://taker:pw@127.0.0.1:" + std::to_string(server.port());
  relock::client client(settings);
  auto q = client.blocking_queue("refused");
  try {
    q.poll(1s);
    FAIL() << "the take was not refused";
  } catch (const relock::error& e) {
    EXPECT_NE(std::string(e.what()).find("NOPERM"), std::string::npos) << e.what();
  }
}
