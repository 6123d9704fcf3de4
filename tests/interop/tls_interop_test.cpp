// SPDX-License-Identifier: Apache-2.0
// relock and the real Redisson contend over TLS (issue #32): scenarios 1-3
// (contention_scenarios.hpp) with both on the tls-port of one server, certificates from a throwaway
// CA (support/tls_files), once per Redisson version. Redisson trusts the CA through a PKCS12
// truststore the driver makes from the same PEM file relock reads (--tls-ca), and both verify
// the name "localhost". The test's own raw clients use the server's plain port, so every
// connection on the TLS port is one of relock's or Redisson's.
#include <gtest/gtest.h>

#include <string>

#include <relock/client.hpp>

#include "contention_scenarios.hpp"
#include "interop_env.hpp"
#include "redisson_driver.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/tls_files.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

const tls_files& certificates() {
  static const tls_files files;
  return files;
}

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

  // The contention scenarios' view of the server: the test's raw clients on its plain port, and
  // both sides checked to be on the TLS port whenever both are connected.
  contention::setting contention_setting() {
    contention::setting s;
    s.raw_for = [this](const std::string&) { return raw_client::to(server_); };
    s.subscribers = [this](const std::string& channel) { return subscribers(channel); };
    s.check_connections = [this](const std::string&) { expect_everyone_on_tls(1); };
    return s;
  }

  redis_server server_{{.tls_cert_file = certificates().server_cert(),
                        .tls_key_file = certificates().server_key(),
                        .tls_ca_file = certificates().ca()}};
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace

// 1. Two relock threads and two Redisson owners increment one counter under one lock.
TEST_P(redisson_tls_interop, mutual_exclusion_across_languages_over_tls) {
  auto j = java();
  relock::client client(settings());
  client.lock("warm-up").try_lock();  // relock's connections are up before they are counted
  client.lock("warm-up").unlock();
  contention::mutual_exclusion(j, client, {"shared"}, contention_setting());
}

// 2. Redisson holds: relock gives up on time, then wakes on Redisson's unlock message.
TEST_P(redisson_tls_interop, relock_waits_on_a_redisson_hold_and_wakes_on_its_unlock_over_tls) {
  auto j = java();
  relock::client client(settings());
  contention::relock_waits_on_a_redisson_hold(j, client, "j-holds", contention_setting());
}

// 3. relock holds: Redisson waits, and wakes on relock's unlock and on its force_unlock.
TEST_P(redisson_tls_interop, redisson_waits_on_a_relock_hold_and_wakes_over_tls) {
  auto j = java();
  relock::client client(settings());
  contention::redisson_waits_on_a_relock_hold(j, client, "c-holds", contention_setting());
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
