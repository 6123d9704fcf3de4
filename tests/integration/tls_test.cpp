// SPDX-License-Identifier: Apache-2.0
// relock over TLS against a real redis-server with tls-port, certificates from a throwaway CA:
// verification by name and CA, the server name for an address, mutual TLS, the explicit way to
// turn verification off, every connection of a client (commands, pub/sub, blocking) on TLS, and
// a TLS server slow to answer never taken for a plain one.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/tls_client.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::refusal;
using relock::test::tls_files;
using relock::test::url_path;

namespace {

const tls_files& certificates() {
  static const tls_files files;
  return files;
}

redis_server tls_server(bool auth_clients = false) {
  const auto& t = certificates();
  return redis_server({.tls_cert_file = t.server_cert(),
                       .tls_key_file = t.server_key(),
                       .tls_ca_file = t.ca(),
                       .tls_auth_clients = auth_clients});
}

// How many of the server's clients came in on its TLS port.
int clients_on(raw_client& raw, std::uint16_t port) {
  const std::string list = raw.command({"CLIENT", "LIST"}).str;
  const std::string needle = "laddr=127.0.0.1:" + std::to_string(port) + " ";
  int n = 0;
  for (auto at = list.find(needle); at != std::string::npos; at = list.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(tls, a_lock_over_rediss_verifies_the_server_against_the_ca_and_its_name) {
  auto server = tls_server();
  relock::config c;
  c.url = server.tls_url("localhost");
  c.tls.ca_file = certificates().ca();
  relock::client client(c);
  auto lock = client.lock("tls-lock");
  lock.lock();
  auto raw = raw_client::to(server);
  EXPECT_EQ(raw.command({"EXISTS", "tls-lock"}).integer, 1);
  EXPECT_GE(clients_on(raw, server.tls_port()), 2) << "commands and pub/sub, both on TLS";
  EXPECT_EQ(clients_on(raw, server.port()), 1) << "only this test's own raw client is plain";
  lock.unlock();
  EXPECT_EQ(raw.command({"EXISTS", "tls-lock"}).integer, 0);
}

TEST(tls, waiters_wake_and_queues_block_over_tls) {
  auto server = tls_server();
  relock::config c;
  c.url = server.tls_url("localhost") + "?tls_ca=" + url_path(certificates().ca());
  relock::client holder(c), waiter(c);
  auto held = holder.lock("tls-wait");
  held.lock();
  auto waiting = std::async(std::launch::async, [&] {
    auto lock = waiter.lock("tls-wait");
    const auto asked = std::chrono::steady_clock::now();
    const bool got = lock.try_lock(10s);
    const auto took = std::chrono::steady_clock::now() - asked;
    if (got) lock.unlock();
    return std::make_pair(got, took);
  });
  auto raw = raw_client::to(server);
  ASSERT_TRUE(relock::test::wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{tls-wait}"})
                   .elements.at(1)
                   .integer == 1;
      },
      5s));
  held.unlock();
  const auto [got, took] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(took, 5s) << "woken by the unlock message, not by a lease";

  auto queue = waiter.blocking_queue("tls-queue");
  auto taken = std::async(std::launch::async, [&] { return queue.poll(5s); });
  holder.blocking_queue("tls-queue").offer("over tls");
  EXPECT_EQ(taken.get(), std::optional<std::string>("over tls"));
}

TEST(tls, an_address_the_certificate_does_not_name_needs_the_server_name) {
  auto server = tls_server();
  relock::config c;
  c.url = server.tls_url("127.0.0.1");
  c.tls.ca_file = certificates().ca();
  c.connect_timeout = 3s;
  const auto [code, what] = refusal(c);
  EXPECT_EQ(code, errc::connection);
  EXPECT_NE(what.find("does not name '127.0.0.1'"), std::string::npos) << what;

  c.tls.server_name = "redis.test";
  EXPECT_EQ(refusal(c).second, "");
  c.tls.server_name.clear();
  c.url += "?tls_server_name=redis.test";
  EXPECT_EQ(refusal(c).second, "") << "the URL's option does the same";
}

TEST(tls, a_server_another_ca_signed_is_refused_unless_verification_is_turned_off) {
  auto server = tls_server();
  relock::config c;
  c.url = server.tls_url("localhost");
  c.tls.ca_file = certificates().stranger_ca();
  c.connect_timeout = 3s;
  const auto [code, what] = refusal(c);
  EXPECT_EQ(code, errc::connection);
  EXPECT_NE(what.find("certificate was refused"), std::string::npos) << what;

  std::atomic<int> warnings{0};
  c.tls.insecure_skip_verification = true;
  c.log = [&](relock::log_level level, std::string_view text) {
    if (level == relock::log_level::warning && text.find("without verification") != text.npos) {
      ++warnings;
    }
  };
  {
    relock::client client(c);
    client.lock("insecure").lock();
    client.lock("insecure").unlock();
  }
  EXPECT_EQ(warnings.load(), 1) << "once per client";
}

TEST(tls, a_server_that_asks_for_a_client_certificate_gets_one) {
  auto server = tls_server(/*auth_clients=*/true);
  relock::config c;
  c.url = server.tls_url("localhost");
  c.tls.ca_file = certificates().ca();
  c.connect_timeout = 3s;
  EXPECT_EQ(refusal(c).first, errc::connection) << "no certificate, no connection";

  c.tls.cert_file = certificates().client_cert();
  c.tls.key_file = certificates().client_key();
  relock::client client(c);
  auto lock = client.lock("mutual");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(tls, files_that_cannot_be_used_are_a_clear_error_before_any_connection) {
  relock::config c;
  c.url = "rediss://localhost:1";
  c.tls.ca_file = "/nonexistent/ca.pem";
  auto [code, what] = refusal(c);
  EXPECT_EQ(code, errc::invalid_argument);
  EXPECT_NE(what.find("/nonexistent/ca.pem"), std::string::npos) << what;

  c.tls.ca_file = certificates().ca();
  c.tls.cert_file = certificates().client_cert();
  c.tls.key_file = certificates().server_key();
  std::tie(code, what) = refusal(c);
  EXPECT_EQ(code, errc::invalid_argument);
  EXPECT_NE(what.find(certificates().server_key()), std::string::npos) << what;
}

// relock asks a port that leaves its TLS hello unanswered whether it speaks plain RESP (a plain
// Redis never answers a hello: net/plain_probe.hpp). A TLS server that is merely slow (here:
// stopped for 300 ms, fifteen times the probe's 20 ms) answers no such question, and the
// client connects once it resumes.
TEST(tls, a_tls_server_slow_to_answer_is_not_taken_for_a_plain_one) {
  auto server = tls_server();
  relock::config c;
  c.url = server.tls_url("localhost");
  c.tls.ca_file = certificates().ca();
  std::atomic<int> probes{0};
  c.log = [&](relock::log_level, std::string_view text) {
    if (text.find("asking the port in plain RESP") != text.npos) ++probes;
  };
  server.pause();
  auto resume = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(300ms);  // the fault's length, not a wait for a condition
    server.resume();
  });
  const auto [code, what] = refusal(c);
  resume.get();
  EXPECT_EQ(what, "") << code.message();
  EXPECT_GE(probes.load(), 1) << "the hello went unanswered long enough to ask";
}
