// SPDX-License-Identifier: Apache-2.0
// relock through Sentinel over TLS, on sets of its own (not the shared plain one): TLS to the
// sentinels and the data nodes (rediss-sentinel://), to the data nodes only (?tls=data) and to
// the sentinels only (?tls=sentinels). In each, a lock lands on the master and a holder and a
// waiter follow it across a SENTINEL FAILOVER. The certificates name localhost, not 127.0.0.1:
// where the data nodes speak TLS, Sentinel announces them by that name (sentinel_tls_set.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "support/sentinel_tls_set.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;

namespace relock::test {
namespace {

const tls_files& certificates() {
  static const tls_files files;
  return files;
}

// How many relock connections a data node has on `port` (CLIENT LIST's laddr).
int relock_clients_on(raw_client& raw, std::uint16_t port) {
  const std::string list = raw.command({"CLIENT", "LIST"}).str;
  int n = 0;
  for (std::size_t at = 0; (at = list.find("laddr=", at)) != std::string::npos; ++at) {
    const std::string line = list.substr(at, list.find('\n', at) - at);
    if (line.starts_with("laddr=127.0.0.1:" + std::to_string(port) + " ") &&
        line.find(" name=relock:") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

std::uint16_t port_of(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

void locks_follow_the_master(tls_side side) {
  sentinel_tls_set set(certificates(), side);
  relock::config c;
  c.url = set.url();
  c.connect_timeout = 3s;
  c.log = [](log_level level, std::string_view text) {
    if (level >= log_level::warning) std::cout << "  relock: " << text << std::endl;
  };
  relock::client holder(c), waiter(c);
  auto held = holder.lock("tls-follow");
  held.lock();
  const auto master = set.master_port();
  EXPECT_EQ(set.client(master).command({"EXISTS", "tls-follow"}).integer, 1);
  const auto node = holder.inspect("tls-follow").node;
  EXPECT_EQ(node, set.announced(master)) << "relock writes where Sentinel says, by its name";
  if (side != tls_side::sentinels) {
    auto raw = set.client(master);
    EXPECT_GE(relock_clients_on(raw, port_of(node)), 1) << "on the TLS port";
    EXPECT_EQ(relock_clients_on(raw, master), 0) << "never on the plain one";
  }

  std::atomic<bool> acquired{false};
  std::thread waiting([&] {
    auto lock = waiter.lock("tls-follow");
    if (lock.try_lock(30s)) {
      acquired = true;
      lock.unlock();
    }
  });
  const auto new_master = set.failover();
  const auto there = set.announced(new_master);
  EXPECT_TRUE(wait_until([&] { return holder.inspect("tls-follow").node == there; }, 20s, 10ms));
  EXPECT_EQ(set.client(new_master).command({"EXISTS", "tls-follow"}).integer, 1)
      << "the hold was lost";
  EXPECT_TRUE(wait_until([&] { return waiter.inspect("tls-follow").node == there; }, 20s, 10ms));
  EXPECT_FALSE(acquired.load()) << "the waiter got the lock while it was held";
  held.unlock();
  EXPECT_TRUE(wait_until([&] { return acquired.load(); }, 10s));
  waiting.join();
}

TEST(sentinel_tls, sentinels_and_data_nodes_over_tls) { locks_follow_the_master(tls_side::both); }

TEST(sentinel_tls, data_nodes_over_tls_sentinels_in_plain_text) {
  locks_follow_the_master(tls_side::data);
}

TEST(sentinel_tls, sentinels_over_tls_data_nodes_in_plain_text) {
  locks_follow_the_master(tls_side::sentinels);
}

TEST(sentinel_tls, data_nodes_announced_by_address_need_the_name_their_certificate_has) {
  sentinel_tls_set set(certificates(), tls_side::both, /*by_name=*/false);
  relock::config c;
  c.url = set.url();
  c.connect_timeout = 3s;
  try {
    relock::client client(c);
    ADD_FAILURE() << "connected to 127.0.0.1, which the certificate does not name";
  } catch (const relock::error& e) {
    EXPECT_NE(std::string(e.what()).find("does not name '127.0.0.1'"), std::string::npos)
        << e.what();
  }
  // The name the certificates carry, for the sentinels and the data nodes alike.
  c.url += "&tls_server_name=localhost";
  relock::client client(c);
  auto lock = client.lock("tls-by-address");
  EXPECT_TRUE(lock.try_lock());
  EXPECT_EQ(client.inspect("tls-by-address").node, set.announced(set.master_port()));
  lock.unlock();
}

}  // namespace
}  // namespace relock::test
