// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson contend over TLS (issue #32): scenarios 1-3 of
// lock_interop_test.cpp with both on the tls-port of one server, certificates from a throwaway
// CA (support/tls_files), once per Redisson version. Redisson trusts the CA through a PKCS12
// truststore the driver makes from the same PEM file relock reads (--tls-ca), and both verify
// the name "localhost". The test's own raw clients use the server's plain port, so every
// connection on the TLS port is one of relock's or Redisson's.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_driver.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

const tls_files& certificates() {
  static const tls_files files;
  return files;
}

using interval = std::pair<std::int64_t, std::int64_t>;  // CLOCK_MONOTONIC ns: acquired, released

class redisson_tls_interop : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { redisson_driver::check_jar(GetParam()); }

  relock::config settings() {
    relock::config c;
    c.url = server_.tls_url("localhost");
    c.tls.ca_file = certificates().ca();
    return c;
  }
  redisson_driver java() {
    return redisson_driver(GetParam(), server_.tls_url("localhost"),
                           {.tls_ca_file = certificates().ca()});
  }
  std::int64_t subscribers(const std::string& channel) {
    return raw_.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
  }
  // Connections the server holds on `port` (CLIENT LIST's laddr).
  int clients_on(std::uint16_t port) {
    const std::string list = raw_.command({"CLIENT", "LIST"}).str;
    const std::string needle = "laddr=127.0.0.1:" + std::to_string(port) + " ";
    int n = 0;
    for (auto at = list.find(needle); at != std::string::npos; at = list.find(needle, at + 1)) ++n;
    return n;
  }
  // Both sides are on the TLS port: Redisson's idle connections (2 commands + 1 subscription)
  // and relock's, and nothing but the test's raw clients on the plain one.
  void expect_everyone_on_tls(int raw_clients) {
    EXPECT_GE(clients_on(server_.tls_port()), 4);
    EXPECT_EQ(clients_on(server_.port()), raw_clients);
  }

  redis_server server_{{.tls_cert_file = certificates().server_cert(),
                        .tls_key_file = certificates().server_key(),
                        .tls_ca_file = certificates().ca()}};
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace

// 1. Two relock threads and two Redisson owners increment one counter under one lock.
TEST_P(redisson_tls_interop, mutual_exclusion_across_languages_over_tls) {
  constexpr int rounds = 500;
  auto j = java();
  relock::client client(settings());
  client.lock("warm-up").try_lock();  // relock's connections are up before they are counted
  client.lock("warm-up").unlock();
  expect_everyone_on_tls(1);
  auto a = j.send("a", "incloop shared counter " + std::to_string(rounds) + " 50");
  auto b = j.send("b", "incloop shared counter " + std::to_string(rounds) + " 50");

  std::vector<interval> cpp_intervals[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      auto raw = raw_client::to(server_);
      auto lk = client.lock("shared");
      for (int i = 0; i < rounds; ++i) {
        std::unique_lock<relock::Lock> guard(lk);
        auto acquired = now_ns();
        auto v = raw.command({"GET", "counter"});
        std::int64_t n = v.is_nil() ? 0 : std::stoll(v.str);
        std::this_thread::sleep_for(50us);  // read, pause, write: the lock is all that protects it
        raw.command({"SET", "counter", std::to_string(n + 1)});
        cpp_intervals[t].push_back({acquired, now_ns()});
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<interval> all;
  for (auto& v : cpp_intervals) all.insert(all.end(), v.begin(), v.end());
  for (const auto& id : {a, b}) {
    auto r = j.wait_reply(id, 120s);
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    for (const auto& iv : r["result"]["intervals"]) {
      all.push_back({iv[0].get<std::int64_t>(), iv[1].get<std::int64_t>()});
    }
  }
  EXPECT_EQ(raw_.command({"GET", "counter"}).str, std::to_string(4 * rounds));
  ASSERT_EQ(all.size(), 4u * rounds);
  std::sort(all.begin(), all.end());
  int overlaps = 0;
  for (std::size_t i = 1; i < all.size(); ++i) overlaps += all[i].first < all[i - 1].second;
  EXPECT_EQ(overlaps, 0);
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message.
TEST_P(redisson_tls_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock_over_tls) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("j-holds");
  ASSERT_EQ(j.call_ok("a", "lock j-holds 30000"), true);

  auto started = steady::now();
  EXPECT_FALSE(lk.try_lock(500ms));
  auto took = steady::now() - started;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 2s);

  auto waiting = try_on_thread(lk, 20s);
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("j-holds")) >= 1; }, 5s));
  expect_everyone_on_tls(1);
  auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock j-holds"), true);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto [got, at] = waiting.get();
  EXPECT_TRUE(got);
  EXPECT_LT(at - released, 1s);  // the lease had 29 s left: it woke on the message
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock.
TEST_P(redisson_tls_interop, redisson_waits_on_a_relock_hold_and_wakes_over_tls) {
  auto j = java();
  relock::client client(settings());
  auto lk = client.lock("c-holds");
  lk.lock(30s);
  auto id = j.send("a", "trylock c-holds 20000");
  EXPECT_THROW(j.wait_reply(id, 300ms), std::runtime_error);  // still waiting
  expect_everyone_on_tls(1);
  auto released = steady::now();
  lk.unlock();
  auto r = j.wait_reply(id, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 1'000'000'000);
  ASSERT_EQ(j.call_ok("a", "unlock c-holds"), true);

  lk.lock(30s);
  auto second = j.send("b", "trylock c-holds 20000");
  EXPECT_THROW(j.wait_reply(second, 300ms), std::runtime_error);
  auto forced = steady::now();
  EXPECT_TRUE(lk.force_unlock());
  auto r2 = j.wait_reply(second, 5s);
  EXPECT_EQ(r2["result"], true) << r2.dump();
  EXPECT_LT(ns_after(forced, r2), 1'000'000'000);
  j.call_ok("b", "unlock c-holds");
}

// The driver's TLS is real: without the test CA, Redisson refuses the server and never starts.
TEST_P(redisson_tls_interop, redisson_without_the_ca_refuses_the_server) {
  try {
    redisson_driver j(GetParam(), server_.tls_url("localhost"), {.ready_timeout = 20s});
    ADD_FAILURE() << "Redisson " << j.redisson_version() << " trusted a CA it was never given";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(redisson, redisson_tls_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
