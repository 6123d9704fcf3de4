// SPDX-License-Identifier: Apache-2.0
// The test fixtures themselves, against real redis-server processes: every other integration
// test trusts them to start, authenticate, restart, pause and clean up as documented.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "support/log_file.hpp"
#include "support/raw_client.hpp"
#include "support/redis_config.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::resp::reply;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::wait_until;

namespace {

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

bool pong(raw_client& c) {
  try {
    return c.command({"PING"}) == reply::make_status("PONG");
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace

TEST(fixture, server_starts_and_answers_ping) {
  redis_server server;
  EXPECT_EQ(server.host(), "127.0.0.1");
  EXPECT_NE(server.port(), 0);
  EXPECT_EQ(server.url(), "redis://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_GT(server.pid(), 0);
  EXPECT_TRUE(std::filesystem::is_directory(server.dir()));
  auto raw = raw_client::to(server);
  EXPECT_EQ(raw.command({"PING"}), reply::make_status("PONG"));
  EXPECT_EQ(raw.command({"SET", "k", "v"}), reply::make_status("OK"));
  EXPECT_EQ(raw.command({"GET", "k"}), reply::make_string("v"));
  EXPECT_EQ(raw.command({"GET", "missing"}), reply::make_nil());
  EXPECT_EQ(raw.command({"INCR", "n"}), reply::make_integer(1));
  auto arr = raw.command({"CONFIG", "GET", "port"});
  EXPECT_EQ(arr, reply::make_array({reply::make_string("port"),
                                    reply::make_string(std::to_string(server.port()))}));
}

TEST(fixture, two_servers_get_their_own_ports_and_dirs) {
  redis_server a, b;
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.dir(), b.dir());
  raw_client::to(a).command({"SET", "k", "a"});
  EXPECT_EQ(raw_client::to(b).command({"GET", "k"}), reply::make_nil());
}

TEST(fixture, password_server_refuses_unauthenticated_commands) {
  redis_server server({.password = "s3cret"});
  EXPECT_EQ(server.url(), "redis://:s3cret@127.0.0.1:" + std::to_string(server.port()));
  raw_client anonymous(server.host(), server.port());
  auto refused = anonymous.command({"PING"});
  EXPECT_TRUE(refused.is_error());
  EXPECT_EQ(refused.error_code(), "NOAUTH") << refused.str;
  EXPECT_THROW(raw_client(server.host(), server.port(), "wrong"), std::runtime_error);
  raw_client authenticated(server.host(), server.port(), "s3cret");
  EXPECT_EQ(authenticated.command({"PING"}), reply::make_status("PONG"));
}

TEST(fixture, acl_user_is_the_only_way_in) {
  redis_server server({.password = "pw", .acl_user = "app"});
  EXPECT_EQ(server.url(), "redis://app:pw@127.0.0.1:" + std::to_string(server.port()));
  auto app = raw_client::to(server);
  EXPECT_EQ(app.command({"ACL", "WHOAMI"}), reply::make_string("app"));
  EXPECT_EQ(app.command({"SET", "k", "v"}), reply::make_status("OK"));
  raw_client anonymous(server.host(), server.port());
  EXPECT_EQ(anonymous.command({"GET", "k"}).error_code(), "NOAUTH");
  // The default user is off: the password alone does not log in.
  EXPECT_THROW(raw_client(server.host(), server.port(), "pw"), std::runtime_error);
}

TEST(fixture, url_percent_encodes_credentials) {
  redis_server server({.password = "p@ss:w/rd \"x\"", .acl_user = "ops@eu"});
  EXPECT_EQ(server.url(), "redis://ops%40eu:p%40ss%3Aw%2Frd%20%22x%22@127.0.0.1:" +
                              std::to_string(server.port()));
  EXPECT_EQ(raw_client::to(server).command({"ACL", "WHOAMI"}), reply::make_string("ops@eu"));
}

TEST(fixture, acl_user_without_password_is_rejected) {
  EXPECT_THROW(redis_server({.acl_user = "app"}), std::invalid_argument);
}

TEST(fixture, extra_config_lines_apply) {
  redis_server server({.extra_config = {"maxmemory 10mb", "databases 4"}});
  auto raw = raw_client::to(server);
  EXPECT_EQ(raw.command({"CONFIG", "GET", "maxmemory"}).elements.at(1).str, "10485760");
  EXPECT_EQ(raw.command({"SELECT", "4"}).error_code(), "ERR");
}

TEST(fixture, a_server_that_fails_to_start_reports_its_log) {
  try {
    redis_server server({.extra_config = {"no-such-directive yes"}});
    FAIL() << "started with a bad config line";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("exited with status"), std::string::npos) << what;
    EXPECT_NE(what.find("no-such-directive"), std::string::npos) << what;
  }
}

TEST(fixture, stop_then_start_on_the_same_port_comes_back_empty) {
  redis_server server;
  auto raw = raw_client::to(server);
  ASSERT_EQ(raw.command({"SET", "k", "v"}), reply::make_status("OK"));
  const auto port = server.port();
  const auto first = server.pid();

  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_TRUE(process_gone(first));
  EXPECT_THROW(raw.command({"PING"}), std::runtime_error);
  server.stop();  // idempotent

  server.start();
  EXPECT_EQ(server.port(), port);
  EXPECT_NE(server.pid(), first);
  // The raw client reconnects on its own after the I/O error.
  EXPECT_EQ(raw.command({"GET", "k"}), reply::make_nil());
  EXPECT_THROW(server.start(), std::logic_error);
}

TEST(fixture, kill_then_start_on_the_same_port) {
  redis_server server;
  const auto port = server.port();
  const auto first = server.pid();
  server.kill();
  EXPECT_TRUE(process_gone(first));
  server.kill();  // idempotent
  server.start();
  EXPECT_EQ(server.port(), port);
  auto raw = raw_client::to(server);
  EXPECT_TRUE(pong(raw));
}

TEST(fixture, pause_silences_the_server_and_resume_restores_it) {
  redis_server server;
  auto raw = raw_client::to(server);
  raw.set_timeout(200ms);
  ASSERT_TRUE(pong(raw));

  server.pause();
  auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(raw.command({"PING"}), std::runtime_error);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
  // A new connection is accepted by the kernel's backlog, but nothing answers on it either.
  EXPECT_THROW(raw_client(server.host(), server.port(), {}, {}, 200ms).command({"PING"}),
               std::runtime_error);

  server.resume();
  EXPECT_TRUE(wait_until([&] { return pong(raw); }, 5s));
}

TEST(fixture, stop_shuts_a_paused_server_down_gracefully) {
  redis_server server;
  const auto pid = server.pid();
  server.pause();
  auto started = std::chrono::steady_clock::now();
  server.stop();
  // Well under the 5 s after which stop() falls back to SIGKILL.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  EXPECT_TRUE(process_gone(pid));
  EXPECT_NE(server.log_tail().find("ready to exit"), std::string::npos) << server.log_tail();
}

TEST(fixture, destructor_leaves_no_process_and_no_dir) {
  pid_t pid;
  std::filesystem::path dir;
  {
    redis_server server;
    pid = server.pid();
    dir = server.dir();
    ASSERT_FALSE(process_gone(pid));
  }
  EXPECT_TRUE(process_gone(pid));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(fixture, destructor_of_a_paused_server_leaves_no_process) {
  pid_t pid;
  {
    redis_server server;
    pid = server.pid();
    server.pause();
  }
  EXPECT_TRUE(process_gone(pid));
}

TEST(fixture, server_dies_with_a_test_process_that_crashes) {
  // Orphans are re-parented to us instead of init, so we can reap the server and see it die.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  // The crashing process cannot remove its server's dir; make it one we remove.
  relock::test::temp_dir leftovers("relock-crash");
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t crasher = ::fork();
  ASSERT_GE(crasher, 0);
  if (crasher == 0) {
    // A "test process" that starts a server and dies without running any destructor.
    ::close(pipe_fds[0]);
    ::setenv("TMPDIR", leftovers.path().c_str(), 1);
    pid_t server_pid = -1;
    try {
      auto* server = new redis_server();
      server_pid = server->pid();
    } catch (...) {
    }
    (void)!::write(pipe_fds[1], &server_pid, sizeof server_pid);
    ::raise(SIGKILL);
  }
  ::close(pipe_fds[1]);
  pid_t server_pid = -1;
  ASSERT_EQ(::read(pipe_fds[0], &server_pid, sizeof server_pid),
            static_cast<ssize_t>(sizeof server_pid));
  ::close(pipe_fds[0]);
  ASSERT_GT(server_pid, 0);
  ASSERT_EQ(::waitpid(crasher, nullptr, 0), crasher);

  int status = 0;
  auto reaped = [&] { return ::waitpid(server_pid, &status, WNOHANG) == server_pid; };
  EXPECT_TRUE(wait_until(reaped, 5s));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(fixture, wait_until_returns_early_or_at_the_deadline) {
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_until([] { return true; }, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);

  int calls = 0;
  EXPECT_TRUE(wait_until([&] { return ++calls == 3; }, 5s, 1ms));
  EXPECT_EQ(calls, 3);

  started = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_until([] { return false; }, 50ms));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 50ms);
}

TEST(fixture, last_lines_of_a_log) {
  relock::test::temp_dir dir("relock-log");
  auto file = dir.path() / "log";
  relock::test::write_file(file, "a\nb\nc\n");
  EXPECT_EQ(relock::test::last_lines(file, 2), "b\nc\n");
  EXPECT_EQ(relock::test::last_lines(file, 9), "a\nb\nc\n");
  EXPECT_EQ(relock::test::last_lines(file, 0), "");
  relock::test::write_file(file, "a\nb");
  EXPECT_EQ(relock::test::last_lines(file, 1), "b");
  EXPECT_EQ(relock::test::last_lines(dir.path() / "missing", 3), "");
  EXPECT_EQ(relock::test::read_from(file, 2), "b");
}

TEST(fixture, config_values_are_quoted) {
  EXPECT_EQ(relock::test::config_quote("plain"), "\"plain\"");
  EXPECT_EQ(relock::test::config_quote("a \"b\" \\ c\n"), "\"a \\\"b\\\" \\\\ c\\x0a\"");
}
