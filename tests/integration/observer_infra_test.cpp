// SPDX-License-Identifier: Apache-2.0
// The observer's events beyond acquires and releases, against a real server: an acquire's
// start, a lost and restored connection, a refused subscription, queue operations (an offer,
// its transfer, a take, a poll that finds nothing); and the name each connection gives itself.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <relock/client.hpp>
#include <relock/observer.hpp>

#include "support/event_log.hpp"
#include "support/host_name.hpp"
#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using relock::connection_change;
using relock::errc;
using relock::queue_operation;
using relock::queue_outcome;
using relock::test::event_log;
using relock::test::host_name;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::wait_until;

namespace {

class observer_infra : public ::testing::Test {
 protected:
  relock::config settings() {
    auto s = relock::test::settings_for(server_);
    s.observer = log_;
    return s;
  }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  std::shared_ptr<event_log> log_ = std::make_shared<event_log>();
};

}  // namespace

TEST_F(observer_infra, an_acquire_is_heard_when_it_begins_and_when_it_ends) {
  relock::client holder(relock::test::settings_for(server_)), waiter(settings());
  auto held = holder.lock("begun");
  held.lock();
  auto result = std::async(std::launch::async, [&] { return waiter.lock("begun").try_lock(5s); });
  // Waiting: begun and not finished, which is how a "waiters now" gauge counts it.
  ASSERT_TRUE(wait_until([&] { return log_->acquires() == std::pair(1, 0); }, 5s));
  held.unlock();
  EXPECT_TRUE(result.get());
  EXPECT_EQ(log_->acquires(), std::pair(1, 1));
}

TEST_F(observer_infra, a_lost_connection_and_its_recovery_are_heard) {
  relock::client client(settings());
  auto m = client.lock("through-a-kill");
  m.lock();
  raw_.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto& c : log_->connections()) {
          if (c.change == connection_change::restored) return true;
        }
        return false;
      },
      10s));
  const auto events = log_->connections();
  const std::string address = "127.0.0.1:" + std::to_string(server_.port());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().change, connection_change::lost);
  EXPECT_TRUE(events.front().error);
  for (const auto& e : events) EXPECT_EQ(e.address, address);
  for (const auto& e : events) {
    if (e.change == connection_change::restored) {
      EXPECT_GT(e.down_for.count(), 0);
    }
  }
  m.unlock();  // the client works on after the kill
}

TEST_F(observer_infra, a_refused_subscription_is_heard_with_its_channel) {
  // A user whose rules leave every channel out: the lock works, its wake-ups cannot.
  raw_.command({"ACL", "SETUSER", "deaf", "on", ">deaf-pw", "~*", "+@all", "resetchannels"});
  auto s = settings();
  s.url = "redis://deaf:deaf-pw@127.0.0.1:" + std::to_string(server_.port());
  relock::client holder(relock::test::settings_for(server_)), waiter(s);
  auto held = holder.lock("unheard");
  held.lock();
  auto result =
      std::async(std::launch::async, [&] { return waiter.lock("unheard").try_lock(300ms); });
  ASSERT_TRUE(wait_until([&] { return !log_->refusals().empty(); }, 5s));
  EXPECT_FALSE(result.get());
  held.unlock();
  const auto refusal = log_->refusals().front();
  EXPECT_EQ(refusal.channel, "redisson_lock__channel:{unheard}");
  EXPECT_NE(refusal.detail.find("NOPERM"), std::string::npos) << refusal.detail;
}

TEST_F(observer_infra, an_offer_its_transfer_and_the_takes_are_heard) {
  relock::client client(settings());
  auto delayed = client.delayed_queue("jobs");
  delayed.offer("one", 0ms);
  auto queue = client.blocking_queue("jobs");
  EXPECT_EQ(queue.take(), "one");
  EXPECT_FALSE(queue.poll(50ms).has_value());

  ASSERT_TRUE(wait_until([&] { return log_->queue_operations().size() >= 4; }, 5s));
  int offers = 0, transfers = 0, takes = 0, empties = 0;
  for (const auto& q : log_->queue_operations()) {
    EXPECT_EQ(q.key, "jobs");
    EXPECT_FALSE(q.error);
    if (q.operation == queue_operation::offer && q.outcome == queue_outcome::done) ++offers;
    if (q.operation == queue_operation::transfer) {
      ++transfers;
      EXPECT_EQ(q.elements, 1);
    }
    if (q.operation == queue_operation::take && q.outcome == queue_outcome::done) ++takes;
    if (q.operation == queue_operation::take && q.outcome == queue_outcome::empty) {
      ++empties;
      EXPECT_GE(q.waited, 50ms);
    }
  }
  EXPECT_EQ(offers, 1);
  EXPECT_EQ(transfers, 1);
  EXPECT_EQ(takes, 1);
  EXPECT_EQ(empties, 1);
}

TEST_F(observer_infra, a_failed_offer_is_heard_as_failed) {
  relock::client client(settings());
  raw_.command({"SET", "redisson_delay_queue_timeout:{typed}", "a string"});
  EXPECT_EQ(relock::test::error_of([&] { client.delayed_queue("typed").offer("x", 1s); }),
            errc::wrong_type);
  // The offer, and the transfer, which meets the same key.
  int failed_offers = 0;
  for (const auto& q : log_->queue_operations()) {
    if (q.operation != queue_operation::offer) continue;
    EXPECT_EQ(q.outcome, queue_outcome::failed);
    EXPECT_EQ(q.error, errc::wrong_type);
    ++failed_offers;
  }
  EXPECT_EQ(failed_offers, 1);
}

TEST(client_name, each_connection_names_its_client_host_and_pid) {
  redis_server server;
  raw_client raw = raw_client::to(server);
  relock::client client(relock::test::settings_for(server));
  const std::string name =
      "relock:" + client.id() + ":" + host_name() + ":" + std::to_string(::getpid());
  const std::string list = raw.command({"CLIENT", "LIST"}).str;
  EXPECT_NE(list.find("name=" + name + " "), std::string::npos) << list;
}

TEST(client_name, a_template_is_filled_in_and_a_space_is_refused) {
  redis_server server;
  raw_client raw = raw_client::to(server);
  auto s = relock::test::settings_for(server);
  s.client_name = "billing-{id}@{pid}";
  relock::client client(s);
  const std::string list = raw.command({"CLIENT", "LIST"}).str;
  EXPECT_NE(list.find("name=billing-" + client.id() + "@" + std::to_string(::getpid()) + " "),
            std::string::npos)
      << list;
  s.client_name = "two words";
  EXPECT_EQ(relock::test::error_of([&] { relock::client refused(s); }), errc::invalid_argument);
}
