// SPDX-License-Identifier: Apache-2.0
// The connection layer against a real redis-server: pipelining, timeouts, reconnects, auth.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <asio/post.hpp>
#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "support/client_settings.hpp"
#include "support/host_name.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/sync_calls.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::redis_server;
using relock::test::run;
using relock::test::settings_for;
using relock::test::wait_until;

TEST(connection, ten_thousand_pipelined_commands_from_eight_threads) {
  redis_server server;
  relock::client client(settings_for(server));
  auto& ex = relock::detail::core_of(client)->executor();
  constexpr int threads = 8, per_thread = 1250;
  std::atomic<int> right{0}, wrong{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      // Each thread keeps its commands in flight together and checks every reply.
      std::vector<std::future<bool>> replies;
      for (int i = 0; i < per_thread; ++i) {
        auto expected = "t" + std::to_string(t) + "-" + std::to_string(i);
        auto done = std::make_shared<std::promise<bool>>();
        replies.push_back(done->get_future());
        relock::resp::request r{"ECHO", expected};
        ex.run({}, std::move(r), [done, expected](std::error_code ec, relock::resp::reply v) {
          done->set_value(!ec && v.str == expected);
        });
      }
      for (auto& f : replies) (f.get() ? right : wrong)++;
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(right.load(), threads * per_thread);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(connection, names_itself_and_selects_the_database) {
  redis_server server;
  auto c = settings_for(server);
  c.url += "/2";
  relock::client client(c);
  auto& ex = relock::detail::core_of(client)->executor();
  // relock:{id}:{host}:{pid} (config::client_name's default).
  EXPECT_EQ(
      run(ex, {"CLIENT", "GETNAME"}).value.str,
      "relock:" + client.id() + ":" + relock::test::host_name() + ":" + std::to_string(::getpid()));
  ASSERT_FALSE(run(ex, {"SET", "where", "db2"}).ec);
  auto raw = relock::test::raw_client::to(server);
  raw.command({"SELECT", "2"});
  EXPECT_EQ(raw.command({"GET", "where"}).str, "db2");
}

TEST(connection, a_command_times_out_against_a_stopped_server_then_recovers) {
  redis_server server;
  auto c = settings_for(server);
  c.command_timeout = 300ms;
  relock::client client(c);
  auto& ex = relock::detail::core_of(client)->executor();
  ASSERT_FALSE(run(ex, {"PING"}).ec);

  server.pause();
  auto started = std::chrono::steady_clock::now();
  auto stuck = run(ex, {"SET", "k", "during-pause"});
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(stuck.ec, errc::timeout);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
  server.resume();

  // The late reply to the timed-out command must be swallowed, not handed to the next one.
  EXPECT_TRUE(wait_until([&] { return run(ex, {"ECHO", "after"}).value.str == "after"; }, 5s));
  EXPECT_EQ(run(ex, {"ECHO", "again"}).value.str, "again");
}

TEST(connection, written_commands_fail_when_the_server_dies_and_the_client_reconnects) {
  redis_server server;
  auto c = settings_for(server);
  c.command_timeout = 5s;
  relock::client client(c);
  auto& ex = relock::detail::core_of(client)->executor();
  ASSERT_FALSE(run(ex, {"PING"}).ec);

  // BLPOP is written and waits on the server; killing the server must fail it, not hang it.
  std::promise<std::error_code> blocked;
  ex.run("q", relock::resp::request{"BLPOP", "q", "0"},
         [&](std::error_code ec, relock::resp::reply) { blocked.set_value(ec); });
  auto raw = relock::test::raw_client::to(server);
  ASSERT_TRUE(wait_until(
      [&] {
        return raw.command({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
      },
      5s));
  server.kill();
  auto f = blocked.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(f.get(), errc::connection);

  server.start();
  // A new command waits for the reconnect (within its own timeout) and succeeds.
  EXPECT_EQ(run(ex, {"ECHO", "back"}).value.str, "back");
}

TEST(connection, wrong_password_is_a_clear_authentication_error) {
  redis_server server({.password = "right"});
  auto c = settings_for(server);
  c.url = "redis://:wrong@" + server.host() + ":" + std::to_string(server.port());
  try {
    relock::client client(c);
    FAIL() << "connected with a wrong password";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::auth_failed);
    EXPECT_NE(std::string(e.what()).find("authentication"), std::string::npos) << e.what();
  }
}

TEST(connection, missing_password_is_a_clear_authentication_error) {
  redis_server server({.password = "right"});
  auto c = settings_for(server);
  c.url = "redis://" + server.host() + ":" + std::to_string(server.port());
  try {
    relock::client client(c);
    FAIL() << "connected without the password";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::auth_failed) << e.what();
    EXPECT_NE(std::string(e.what()).find("NOAUTH"), std::string::npos) << e.what();
  }
}

TEST(connection, acl_user_and_password) {
  redis_server server({.password = "pw", .acl_user = "app"});
  relock::client client(settings_for(server));  // url() carries user:password
  EXPECT_EQ(run(relock::detail::core_of(client)->executor(), {"ACL", "WHOAMI"}).value.str, "app");
}

TEST(connection, nothing_listening_is_a_clear_connection_error_within_the_timeout) {
  std::uint16_t port;
  {
    redis_server server;
    port = server.port();
  }  // gone: nothing listens there now
  relock::config c;
  c.url = "redis://127.0.0.1:" + std::to_string(port);
  c.connect_timeout = 2s;
  auto started = std::chrono::steady_clock::now();
  try {
    relock::client client(c);
    FAIL() << "connected to nothing";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::connection);
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s + 500ms);
}

TEST(connection, connect_timeout_bounds_a_server_that_never_answers) {
  redis_server server;
  server.pause();  // accepts TCP (kernel backlog) but never answers the handshake
  auto c = settings_for(server);
  c.connect_timeout = 500ms;
  auto started = std::chrono::steady_clock::now();
  try {
    relock::client client(c);
    FAIL() << "connected to a stopped server";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::connection);
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 3s);
  server.resume();
}

TEST(connection, server_errors_keep_the_servers_text) {
  redis_server server;
  relock::client client(settings_for(server));
  auto& ex = relock::detail::core_of(client)->executor();
  auto bad = run(ex, {"NOSUCHCOMMAND", "x"});
  EXPECT_EQ(bad.ec, errc::server_error);
  EXPECT_NE(bad.value.str.find("unknown command"), std::string::npos) << bad.value.str;

  ASSERT_FALSE(run(ex, {"SET", "s", "v"}).ec);
  auto wrong = run(ex, {"HGET", "s", "f"});
  EXPECT_EQ(wrong.ec, errc::wrong_type);
  EXPECT_NE(wrong.value.str.find("WRONGTYPE"), std::string::npos);
}

TEST(connection, the_log_callback_hears_connects_and_losses) {
  redis_server server;
  std::mutex m;
  std::vector<std::string> lines;
  auto c = settings_for(server);
  c.log = [&](relock::log_level, std::string_view text) {
    std::lock_guard g(m);
    lines.emplace_back(text);
  };
  relock::client client(c);
  server.kill();
  auto seen = [&](std::string_view what) {
    std::lock_guard g(m);
    for (auto& l : lines) {
      if (l.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(seen("connected to"));
  EXPECT_TRUE(wait_until([&] { return seen("lost"); }, 5s));
}

TEST(connection, sockets_are_not_inherited_by_programs_the_client_runs) {
  redis_server server;
  auto socket_fds = [] {
    std::set<int> fds;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      auto target = std::filesystem::read_symlink(entry.path(), ec).string();
      if (!ec && target.starts_with("socket:")) fds.insert(std::stoi(entry.path().filename()));
    }
    return fds;
  };
  auto before = socket_fds();
  relock::client client(settings_for(server));
  int checked = 0;
  for (int fd : socket_fds()) {
    if (before.contains(fd)) continue;
    ++checked;
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC) << "socket fd " << fd << " lacks FD_CLOEXEC";
  }
  EXPECT_GE(checked, 2);  // the command and the subscriber connections
}

TEST(connection, commands_travel_over_a_pool_of_named_connections) {
  redis_server server;
  auto c = settings_for(server);
  c.command_connections = 3;
  relock::client client(c);
  auto raw = relock::test::raw_client::to(server);
  const std::string list = raw.command({"CLIENT", "LIST"}).str;
  std::size_t named = 0;
  for (auto at = list.find("name=relock:" + client.id()); at != std::string::npos;
       at = list.find("name=relock:" + client.id(), at + 1)) {
    ++named;
  }
  EXPECT_EQ(named, 4u) << list;  // three for commands, one for subscriptions
}

TEST(connection, a_keys_requests_queue_behind_one_that_timed_out) {
  redis_server server;
  auto c = settings_for(server);
  c.command_timeout = 300ms;
  c.command_connections = 4;
  relock::client client(c);
  auto& ex = relock::detail::core_of(client)->executor();
  ASSERT_FALSE(run(ex, {"PING"}).ec);
  // Where a request for `key` would go, and how many requests that connection has in flight
  // (asked on the I/O thread, which owns the connections).
  auto route = [&](std::string key) {
    std::promise<std::pair<relock::net::connection*, std::size_t>> where;
    asio::post(relock::detail::core_of(client)->io(), [&] {
      auto& conn = ex.route(key);
      where.set_value({&conn, conn.outstanding()});
    });
    return where.get_future().get();
  };

  server.pause();
  EXPECT_EQ(run(ex, {"SET", "k", "late"}).ec, errc::timeout);
  // Its caller gave up, but the server may still run it: the next request for "k" must follow
  // it on the same socket, while other keys go to an idle connection.
  auto [carrier, in_flight] = route("k");
  EXPECT_EQ(in_flight, 1u);
  auto [elsewhere, idle] = route("other");
  EXPECT_NE(elsewhere, carrier);
  EXPECT_EQ(idle, 0u);
  server.resume();
  // Once the late reply has come, "k" goes wherever is least busy, like any other key.
  EXPECT_TRUE(wait_until([&] { return route("k").second == 0; }, 5s));
  EXPECT_EQ(route("k").first, route("other").first);
}

TEST(connection, a_closed_connection_fails_sends_later_never_inside_send) {
  // Inline callbacks re-entered a waiter queue in the middle of changing it at shutdown.
  asio::io_context io;
  auto conn = relock::net::connection::create(io, {});
  conn->close();
  bool called = false;
  std::error_code got;
  conn->send(relock::resp::request{"PING"}, relock::net::clock::now() + 1s,
             [&](std::error_code ec, relock::net::reply_span) {
               called = true;
               got = ec;
             });
  EXPECT_FALSE(called);
  io.run();
  EXPECT_TRUE(called);
  EXPECT_EQ(got, errc::cancelled);
}
