// SPDX-License-Identifier: Apache-2.0
// config::observer hears the client's work as typed events (relock/observer.hpp): an acquire
// with its outcome, wait and tries, a release with its hold time, the watchdog's renewals, a
// hold lost. A recording observer beside a real server; every figure checked against what the
// test did.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>
#include <relock/observer.hpp>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using relock::acquire_outcome;
using relock::errc;
using relock::test::raw_client;
using relock::test::redis_server;
using relock::test::wait_until;

namespace {

struct acquired {
  std::string kind, key;
  acquire_outcome outcome;
  std::error_code error;
  std::chrono::microseconds waited;
  std::int64_t tries;
};
struct released {
  std::string kind, key;
  std::error_code error;
  std::chrono::microseconds held;
};
struct lost {
  std::string key, owner;
  std::error_code reason;
};

// Keeps every event; read from the test's thread under the lock.
class recorder : public relock::observer {
 public:
  void on_acquire(const relock::acquire_event& e) override {
    std::lock_guard guard(mutex_);
    acquires_.push_back(
        {std::string(e.kind), std::string(e.key), e.outcome, e.error, e.waited, e.tries});
  }
  void on_release(const relock::release_event& e) override {
    std::lock_guard guard(mutex_);
    releases_.push_back({std::string(e.kind), std::string(e.key), e.error, e.held});
  }
  void on_renewal(const relock::renewal_event& e) override {
    std::lock_guard guard(mutex_);
    if (!e.error) renewed_holds_ += e.holds;
  }
  void on_loss(const relock::loss_event& e) override {
    std::lock_guard guard(mutex_);
    losses_.push_back({std::string(e.key), std::string(e.owner), e.reason});
  }

  std::vector<acquired> acquires() const {
    std::lock_guard guard(mutex_);
    return acquires_;
  }
  std::vector<released> releases() const {
    std::lock_guard guard(mutex_);
    return releases_;
  }
  std::vector<lost> losses() const {
    std::lock_guard guard(mutex_);
    return losses_;
  }
  std::size_t renewed_holds() const {
    std::lock_guard guard(mutex_);
    return renewed_holds_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<acquired> acquires_;
  std::vector<released> releases_;
  std::vector<lost> losses_;
  std::size_t renewed_holds_ = 0;
};

class observer_events : public ::testing::Test {
 protected:
  relock::config settings() {
    auto s = relock::test::settings_for(server_);
    s.observer = recorder_;
    return s;
  }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  std::shared_ptr<recorder> recorder_ = std::make_shared<recorder>();
};

}  // namespace

TEST_F(observer_events, an_acquire_and_its_release_are_heard_with_tries_and_hold_time) {
  relock::client client(settings());
  auto m = client.lock("observed");
  m.lock();
  std::this_thread::sleep_for(20ms);  // a hold time to measure, not a wait for a condition
  m.unlock();

  const auto acquires = recorder_->acquires();
  ASSERT_EQ(acquires.size(), 1u);
  EXPECT_EQ(acquires[0].kind, "lock");
  EXPECT_EQ(acquires[0].key, "observed");
  EXPECT_EQ(acquires[0].outcome, acquire_outcome::acquired);
  EXPECT_FALSE(acquires[0].error);
  EXPECT_EQ(acquires[0].tries, 1);
  EXPECT_LT(acquires[0].waited, 5s);

  ASSERT_TRUE(wait_until([&] { return recorder_->releases().size() == 1; }, 5s));
  const auto r = recorder_->releases()[0];
  EXPECT_EQ(r.kind, "lock");
  EXPECT_EQ(r.key, "observed");
  EXPECT_FALSE(r.error);
  EXPECT_GE(r.held, 20ms);
  EXPECT_LT(r.held, 5s);
}

TEST_F(observer_events, a_wait_that_runs_out_and_a_failure_say_how_they_ended) {
  relock::client client(settings());
  auto m = client.lock("contended");
  m.lock();
  const bool got = relock::test::on_other_thread([&] { return m.try_lock(100ms); });
  EXPECT_FALSE(got);
  m.unlock();

  raw_.command({"SET", "texted", "a string"});
  EXPECT_EQ(relock::test::error_of([&] { client.lock("texted").lock(); }), errc::wrong_type);

  const auto acquires = recorder_->acquires();
  ASSERT_EQ(acquires.size(), 3u);
  const auto& ran_out = acquires[1];
  EXPECT_EQ(ran_out.outcome, acquire_outcome::not_acquired);
  EXPECT_FALSE(ran_out.error);
  EXPECT_GE(ran_out.waited, 100ms);
  EXPECT_GE(ran_out.tries, 1);
  const auto& failed = acquires[2];
  EXPECT_EQ(failed.key, "texted");
  EXPECT_EQ(failed.outcome, acquire_outcome::failed);
  EXPECT_EQ(failed.error, errc::wrong_type);

  // An unlock by an owner that holds nothing is heard as such.
  std::error_code ec;
  client.lock("nobody").unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto r = recorder_->releases();
        return !r.empty() && r.back().key == "nobody";
      },
      5s));
  EXPECT_EQ(recorder_->releases().back().error, errc::not_owner);
}

TEST_F(observer_events, a_semaphore_and_a_latch_name_their_kind) {
  relock::client client(settings());
  auto s = client.semaphore("permits");
  s.try_set_permits(1);
  s.acquire();
  s.release();
  auto latch = client.count_down_latch("gate");
  EXPECT_TRUE(latch.await(0ms));  // a latch that holds nothing is open

  const auto acquires = recorder_->acquires();
  ASSERT_EQ(acquires.size(), 2u);
  EXPECT_EQ(acquires[0].kind, "semaphore");
  EXPECT_EQ(acquires[0].outcome, acquire_outcome::acquired);
  EXPECT_EQ(acquires[1].kind, "latch");
  ASSERT_TRUE(wait_until([&] { return recorder_->releases().size() == 1; }, 5s));
  EXPECT_EQ(recorder_->releases()[0].kind, "semaphore");
  EXPECT_EQ(recorder_->releases()[0].held, 0us);  // permits have no holder to time
}

TEST_F(observer_events, renewals_and_a_lost_hold_are_heard) {
  auto s = settings();
  s.watchdog_lease = 600ms;  // renewals every 200 ms
  relock::client client(s);
  auto m = client.lock("renewed");
  m.lock();
  ASSERT_TRUE(wait_until([&] { return recorder_->renewed_holds() >= 2; }, 5s));

  raw_.command({"DEL", "renewed"});
  ASSERT_TRUE(wait_until([&] { return !recorder_->losses().empty(); }, 5s));
  const auto loss = recorder_->losses()[0];
  EXPECT_EQ(loss.key, "renewed");
  EXPECT_EQ(loss.owner, relock::test::my_field(client));
  EXPECT_EQ(loss.reason, errc::lock_lost);
}
