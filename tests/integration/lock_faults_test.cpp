// SPDX-License-Identifier: Apache-2.0
// Bad input and faults: clear errors, nothing changed, nothing leaked.
#include <gtest/gtest.h>

#include <mutex>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

TEST(lock_faults, bad_names_are_refused_before_any_io) {
  redis_server server;
  relock::client client(settings_for(server));
  EXPECT_EQ(error_of([&] { client.lock(""); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { client.lock(std::string(64 * 1024 + 1, 'n')); }),
            errc::invalid_argument);
  EXPECT_EQ(error_of([&] { client.lock(std::string(64 * 1024, 'n')); }), std::error_code());
}

TEST(lock_faults, bad_durations_are_refused_before_any_io) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto lk = client.lock("d");
  EXPECT_EQ(error_of([&] { lk.lock(-1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { lk.try_lock(-5ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { lk.try_lock(1s, -1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { lk.lock(std::chrono::milliseconds::max()); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { lk.try_lock_for(std::chrono::hours::max()); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { lk.lock(0ms); }), errc::invalid_argument);
  EXPECT_EQ(raw.command({"EXISTS", "d"}).integer, 0);
  // As std::timed_mutex: a wait already over tries once.
  EXPECT_TRUE(lk.try_lock_for(-1s));
  lk.unlock();
}

TEST(lock_faults, a_key_of_another_type_surfaces_wrongtype_and_stays_untouched) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  raw.command({"SET", "str", "precious"});
  auto lk = client.lock("str");
  try {
    lk.lock();
    FAIL() << "locked a string key";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::wrong_type);
    EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos) << e.what();
  }
  EXPECT_EQ(error_of([&] { lk.hold_count(); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"GET", "str"}).str, "precious");
  EXPECT_EQ(raw.command({"PTTL", "str"}).integer, -1);
}

TEST(lock_faults, force_unlock_refuses_what_is_not_a_lock_and_changes_nothing) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  raw.command({"SET", "str", "precious"});
  raw.command({"RPUSH", "list", "a", "b"});
  raw.command({"HSET", "user", "name", "bob", "age", "7"});
  raw.command({"HSET", "rw", "mode", "read", "someone:1", "2"});
  for (const char* name : {"str", "list", "user"}) {
    try {
      client.lock(name).force_unlock();
      ADD_FAILURE() << "force_unlock deleted " << name;
    } catch (const relock::error& e) {
      EXPECT_EQ(e.code(), errc::wrong_type) << name;
      EXPECT_NE(std::string(e.what()).find("not a lock"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(raw.command({"GET", "str"}).str, "precious");
  EXPECT_EQ(raw.command({"LLEN", "list"}).integer, 2);
  EXPECT_EQ(raw.command({"HGET", "user", "name"}).str, "bob");
  // hold_count of a field that is not a count says so (it was std::invalid_argument).
  EXPECT_EQ(error_of([&] { client.lock("user").hold_count("name"); }), errc::wrong_type);
  // A read-write lock's hash is a lock: it goes.
  EXPECT_TRUE(client.lock("rw").force_unlock());
  EXPECT_EQ(raw.command({"EXISTS", "rw"}).integer, 0);
  EXPECT_FALSE(client.lock("rw").force_unlock());
}

TEST(lock_faults, unlock_by_a_non_owner_is_not_owner_and_changes_nothing) {
  redis_server server;
  auto c = settings_for(server);
  std::mutex m;
  std::vector<std::pair<std::error_code, std::string>> reported;
  c.on_unlock_error = [&](std::string_view, std::error_code ec, std::string_view detail) {
    std::lock_guard g(m);
    reported.emplace_back(ec, std::string(detail));
  };
  relock::client client(c);
  auto raw = raw_client::to(server);
  auto lk = client.lock("mine");
  lk.lock();
  auto ec = on_other_thread([&] {
    std::error_code e;
    lk.unlock(e);
    return e;
  });
  EXPECT_EQ(ec, errc::not_owner);
  on_other_thread([&] {
    lk.unlock();  // the noexcept form reports through the callback
    return 0;
  });
  {
    std::lock_guard g(m);
    ASSERT_EQ(reported.size(), 1u);
    EXPECT_EQ(reported[0].first, errc::not_owner);
    EXPECT_NE(reported[0].second.find("'mine'"), std::string::npos) << reported[0].second;
    EXPECT_NE(reported[0].second.find(client.id()), std::string::npos) << reported[0].second;
  }
  EXPECT_EQ(lk.hold_count(), 1);
  lk.unlock();
  // And a free lock's unlock is not_owner too.
  std::error_code again;
  lk.unlock(again);
  EXPECT_EQ(again, errc::not_owner);
}

TEST(lock_faults, blocking_calls_on_the_io_thread_are_refused) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("io");
  std::promise<std::error_code> seen;
  asio::post(relock::detail::core_of(client)->io(), [&] {
    try {
      lk.lock();
      seen.set_value({});
    } catch (const relock::error& e) {
      seen.set_value(e.code());
    }
  });
  EXPECT_EQ(seen.get_future().get(), errc::would_deadlock);
}

TEST(lock_faults, bad_client_settings_are_refused_before_connecting) {
  redis_server server;
  auto refused = [&](auto change) {
    auto c = settings_for(server);
    change(c);
    return error_of([&] { relock::client client(c); });
  };
  EXPECT_EQ(refused([](relock::config& c) { c.command_timeout = 0ms; }), errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.command_connections = 0; }), errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.command_connections = 65; }), errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.busy_poll = -1us; }), errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.busy_poll = 11ms; }), errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.unlock_latch_sweep_delay = -1ms; }),
            errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) { c.unlock_latch_sweep_delay = 10001ms; }),
            errc::invalid_argument);
  EXPECT_EQ(refused([](relock::config& c) {
              c.unlock_latch_ttl = 500ms;
              c.unlock_latch_sweep_delay = 500ms;
            }),
            errc::invalid_argument);
  // Nothing reached the server: only the raw probe's own connection, if any, is listed.
  auto raw = raw_client::to(server);
  EXPECT_EQ(raw.command({"CLIENT", "LIST"}).str.find("name=relock"), std::string::npos);
}
