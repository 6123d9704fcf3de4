// SPDX-License-Identifier: Apache-2.0
// relock::permit on a real server: permits of either semaphore come back when their permit goes
// out of scope (an exception's way out too), once however often the permit was moved; detach
// keeps them taken; release reports what happened (lock_lost for a lease that ran out) and leaves
// nothing for the destructor; the destructor's failures reach config::on_unlock_error; on relock's
// I/O thread a permit is given back without waiting. And the calls that read like
// std::counting_semaphore: try_acquire_for and try_acquire_until take a wait of zero or less as
// one attempt, and never return before their deadline.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "support/lock_env.hpp"
#include "support/permit_ids.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

// What config::on_unlock_error heard: (key, error), in order.
struct unlock_errors {
  std::mutex m;
  std::vector<std::pair<std::string, std::error_code>> heard;

  void hear(std::string_view key, std::error_code ec) {
    std::lock_guard g(m);
    heard.emplace_back(std::string(key), ec);
  }
  std::size_t size() {
    std::lock_guard g(m);
    return heard.size();
  }
  std::pair<std::string, std::error_code> at(std::size_t i) {
    std::lock_guard g(m);
    return heard.at(i);
  }
};

// A server and a client whose failed unlocks and releases are recorded.
class permits : public ::testing::Test {
 protected:
  permits() : client_(make_settings(server_, errors_)) {}

  static relock::config make_settings(const redis_server& server,
                                      std::shared_ptr<unlock_errors> errors) {
    auto settings = settings_for(server);
    settings.on_unlock_error = [errors](std::string_view key, std::error_code ec,
                                        std::string_view) { errors->hear(key, ec); };
    return settings;
  }

  // A plain semaphore with `n` permits, and a permit-expirable one with `n`.
  relock::semaphore counted(std::int64_t n) {
    auto sem = client_.semaphore("sem");
    EXPECT_TRUE(sem.try_set_permits(n));
    return sem;
  }
  relock::permit_expirable_semaphore expirable(std::int64_t n) {
    auto sem = client_.permit_expirable_semaphore("pes");
    EXPECT_TRUE(sem.try_set_permits(n));
    return sem;
  }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  std::shared_ptr<unlock_errors> errors_ = std::make_shared<unlock_errors>();
  relock::client client_;
};

}  // namespace

TEST_F(permits, a_permit_gives_its_permits_back_at_the_end_of_its_scope) {
  auto sem = counted(3);
  auto pes = expirable(1);
  {
    auto two = sem.acquire_permits(2);
    EXPECT_TRUE(two);
    EXPECT_TRUE(two.owns());
    EXPECT_EQ(two.count(), 2);
    EXPECT_EQ(two.id(), "");
    EXPECT_EQ(two.semaphore_name(), "sem");
    EXPECT_EQ(sem.available_permits(), 1);

    auto one = pes.acquire();
    EXPECT_EQ(one.count(), 1);
    EXPECT_TRUE(is_permit_id(one.id())) << one.id();
    EXPECT_EQ(one.semaphore_name(), "pes");
    EXPECT_EQ(pes.available_permits(), 0);
    EXPECT_EQ(pes.acquired_permits(), 1);
  }
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(pes.available_permits(), 1);
  EXPECT_EQ(pes.acquired_permits(), 0);
  EXPECT_EQ(raw_.command({"EXISTS", "{pes}:timeout"}).integer, 0);
  EXPECT_EQ(errors_->size(), 0u);
}

TEST_F(permits, an_exception_passing_through_the_scope_gives_them_back) {
  auto sem = counted(2);
  auto pes = expirable(1);
  EXPECT_THROW(
      {
        auto two = sem.acquire_permits(2);
        auto one = pes.acquire(30s);
        throw std::runtime_error("the work failed");
      },
      std::runtime_error);
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(pes.available_permits(), 1);
  EXPECT_EQ(pes.acquired_permits(), 0);
  EXPECT_EQ(errors_->size(), 0u);
}

// However often a permit moves, its permits go back once: a plain semaphore's count would grow
// past its permits, an id-permit given back twice would report not_owner.
TEST_F(permits, a_moved_permit_gives_its_permits_back_once) {
  auto sem = counted(2);
  auto pes = expirable(1);
  {
    auto first = sem.acquire_permits(2);
    auto second = std::move(first);
    EXPECT_FALSE(first);  // moved-from: empty, by contract
    EXPECT_EQ(first.count(), 0);
    EXPECT_EQ(second.count(), 2);
    std::vector<relock::permit> held;
    held.push_back(std::move(second));
    held.push_back(pes.acquire());
    const std::string id = held.back().id();
    relock::permit last;
    last = std::move(held.back());
    EXPECT_EQ(last.id(), id);
    EXPECT_EQ(sem.available_permits(), 0);
    EXPECT_EQ(pes.available_permits(), 0);
  }
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(pes.available_permits(), 1);

  // Assigning to a permit that owns some gives those back first.
  auto a = sem.acquire_permits(1);
  auto b = sem.acquire_permits(1);
  EXPECT_EQ(sem.available_permits(), 0);
  a = std::move(b);
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(a.count(), 1);
  a = relock::permit();
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(errors_->size(), 0u);
}

TEST_F(permits, detach_keeps_the_permits_taken_and_hands_over_the_id) {
  auto sem = counted(3);
  auto pes = expirable(1);
  std::string id;
  {
    auto two = sem.acquire_permits(2);
    EXPECT_EQ(two.detach(), "");
    EXPECT_FALSE(two);
    auto one = pes.acquire();
    const std::string shown = one.id();
    id = one.detach();
    EXPECT_EQ(id, shown);
    EXPECT_FALSE(one);
    EXPECT_EQ(one.id(), "");
  }
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(pes.acquired_permits(), 1);
  sem.release(2);
  pes.release(id);
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(pes.available_permits(), 1);
  EXPECT_EQ(errors_->size(), 0u);
}

TEST_F(permits, release_gives_them_back_now_and_leaves_nothing_for_the_destructor) {
  auto sem = counted(2);
  auto pes = expirable(1);
  {
    auto two = sem.acquire_permits(2);
    auto one = pes.acquire();
    two.release();
    std::error_code ec = errc::server_error;
    one.release(ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(two);
    EXPECT_FALSE(one);
    EXPECT_EQ(sem.available_permits(), 2);
    EXPECT_EQ(pes.available_permits(), 1);

    // Nothing left to give back: an error for the caller, nothing for the callbacks.
    EXPECT_EQ(error_of([&] { two.release(); }), errc::not_owner);
    one.release(ec);
    EXPECT_EQ(ec, errc::not_owner);
    EXPECT_EQ(async_error_of<>([&](auto h) { one.async_release(h); }), errc::not_owner);
  }
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(pes.available_permits(), 1);
  EXPECT_EQ(errors_->size(), 0u);
}

TEST_F(permits, async_release_gives_them_back_without_blocking) {
  auto sem = counted(2);
  auto pes = expirable(1);
  auto two = sem.acquire_permits(2);
  auto one = pes.acquire();
  auto counted_back = two.async_release(asio::use_future);
  EXPECT_FALSE(two);
  EXPECT_FALSE(async_error_of<>([&](auto h) { one.async_release(h); }));
  EXPECT_FALSE(one);
  counted_back.get();
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(pes.available_permits(), 1);
  EXPECT_EQ(errors_->size(), 0u);
}

// An id-permit whose lease ran out was taken back by the semaphore's next script: its release
// says lock_lost, and gives nothing back twice.
TEST_F(permits, the_release_of_a_permit_whose_lease_ran_out_is_lock_lost) {
  auto pes = expirable(2);
  auto thrown = pes.acquire(100ms);
  auto handed = pes.acquire(100ms);
  ASSERT_TRUE(wait_until([&] { return pes.available_permits() == 2; }, 5s))
      << "the leases never ran out";
  EXPECT_EQ(error_of([&] { thrown.release(); }), errc::lock_lost);
  EXPECT_FALSE(thrown);
  std::error_code ec;
  handed.release(ec);
  EXPECT_EQ(ec, errc::lock_lost);
  EXPECT_FALSE(handed);
  EXPECT_EQ(pes.available_permits(), 2) << "reclaimed once, not also released";
  EXPECT_EQ(errors_->size(), 0u) << "handed to the caller, not to the callbacks";
}

// The destructor cannot throw: a failure goes to config::on_unlock_error, with the key.
TEST_F(permits, the_destructors_failure_goes_to_on_unlock_error) {
  auto pes = expirable(1);
  {
    auto lapsed = pes.acquire(100ms);
    ASSERT_TRUE(wait_until([&] { return pes.available_permits() == 1; }, 5s));
  }
  ASSERT_EQ(errors_->size(), 1u);
  EXPECT_EQ(errors_->at(0).first, "pes");
  EXPECT_EQ(errors_->at(0).second, errc::lock_lost);

  // A plain semaphore's permits whose name now holds a hash: wrong_type, nothing changed.
  auto sem = counted(1);
  {
    auto taken = sem.acquire_permits();
    raw_.command({"DEL", "sem"});
    raw_.command({"HSET", "sem", "field", "value"});
  }
  ASSERT_EQ(errors_->size(), 2u);
  EXPECT_EQ(errors_->at(1).first, "sem");
  EXPECT_EQ(errors_->at(1).second, errc::wrong_type);
  EXPECT_EQ(raw_.command({"TYPE", "sem"}).str, "hash");
}

// A permit let go on relock's I/O thread (in a completion handler) is given back without waiting
// there, which would wait for ever; a blocking release there is refused and keeps the permit.
TEST_F(permits, on_relocks_io_thread_a_permit_is_given_back_without_waiting) {
  auto pes = expirable(1);
  struct seen {
    std::error_code acquire, release;
    bool owned_after = false;
  };
  std::promise<seen> in_handler;
  pes.async_acquire({}, [&](std::error_code ec, std::optional<relock::permit> got) {
    seen s{ec, {}, false};
    if (got) {
      got->release(s.release);
      s.owned_after = static_cast<bool>(*got);
    }
    in_handler.set_value(s);
  });  // the permit goes out of scope here, on the I/O thread
  auto f = in_handler.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  const auto s = f.get();
  ASSERT_FALSE(s.acquire) << s.acquire.message();
  EXPECT_EQ(s.release, errc::would_deadlock);
  EXPECT_TRUE(s.owned_after);
  EXPECT_TRUE(wait_until([&] { return pes.available_permits() == 1; }, 5s));

  // A permit nobody keeps: given back too.
  std::promise<bool> taken;
  pes.async_acquire({}, [&](std::error_code, std::optional<relock::permit> got) {
    taken.set_value(got.has_value());
  });
  auto t = taken.get_future();
  ASSERT_EQ(t.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(t.get());
  EXPECT_TRUE(wait_until([&] { return pes.available_permits() == 1; }, 5s));
  EXPECT_EQ(pes.acquired_permits(), 0);
  EXPECT_EQ(errors_->size(), 0u);
}

// A permit that outlives its client cannot give anything back: cancelled, to the caller or the
// callbacks. (An id-permit then comes back when its lease runs out.)
TEST_F(permits, a_permit_that_outlives_its_client_reports_cancelled) {
  auto errors = std::make_shared<unlock_errors>();
  relock::permit reported;
  relock::permit handed;
  {
    relock::client short_lived(make_settings(server_, errors));
    auto pes = short_lived.permit_expirable_semaphore("gone");
    ASSERT_TRUE(pes.try_set_permits(2));
    reported = pes.acquire(30s);
    handed = pes.acquire(30s);
  }
  std::error_code ec;
  handed.release(ec);
  EXPECT_EQ(ec, errc::cancelled);
  EXPECT_FALSE(handed);
  reported = relock::permit();
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ(errors->at(0).second, errc::cancelled);
  EXPECT_EQ(raw_.command({"ZCARD", "{gone}:timeout"}).integer, 2);
}

TEST_F(permits, counting_permits_of_n_and_their_bounds) {
  auto sem = counted(3);
  auto three = sem.acquire_permits(3);
  EXPECT_EQ(three.count(), 3);
  EXPECT_EQ(sem.try_acquire_permits(1), std::nullopt);  // zero wait: one attempt

  const auto started = steady::now();
  EXPECT_EQ(sem.try_acquire_permits(2, 200ms), std::nullopt);
  EXPECT_GE(steady::now() - started, 200ms) << "returned before its wait ran out";

  // A waiter for 2 gets them when they come back.
  auto waiter = std::async(std::launch::async, [&] { return sem.try_acquire_permits(2, 10s); });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw_, "redisson_sc:{sem}"); }, 5s));
  three = relock::permit();
  auto two = waiter.get();
  ASSERT_TRUE(two);
  EXPECT_EQ(two->count(), 2);
  EXPECT_EQ(sem.available_permits(), 1);

  for (std::int64_t bad : {std::int64_t{0}, std::int64_t{-1}, relock::semaphore::max() + 1}) {
    EXPECT_EQ(error_of([&] { (void)sem.acquire_permits(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { (void)sem.try_acquire_permits(bad); }), errc::invalid_argument);
  }
  EXPECT_EQ(error_of([&] { (void)sem.try_acquire_permits(1, -1ms); }), errc::invalid_argument);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(error_of([&] { (void)sem.acquire_permits(2, stop.get_token()); }), errc::cancelled);
  EXPECT_EQ(sem.available_permits(), 1);
}

// As std::counting_semaphore: try_acquire_for and try_acquire_until with a wait of zero or less
// (a time already past) try once, taking a free permit and not waiting for a taken one; a
// positive wait never ends before its deadline; any duration and clock.
TEST_F(permits, the_std_like_calls_try_once_for_a_wait_of_zero_or_less) {
  auto sem = counted(1);
  EXPECT_TRUE(sem.try_acquire_for(-5ms));  // one attempt, and a permit was free
  EXPECT_EQ(sem.available_permits(), 0);

  const auto started = steady::now();
  EXPECT_FALSE(sem.try_acquire());
  EXPECT_FALSE(sem.try_acquire_for(0s));
  EXPECT_FALSE(sem.try_acquire_for(-1h));
  EXPECT_FALSE(sem.try_acquire_until(steady::now() - 1s));
  EXPECT_FALSE(sem.try_acquire_until(std::chrono::system_clock::now() - 1s));
  EXPECT_LT(steady::now() - started, 3s) << "a wait of zero or less waited";

  const auto until = steady::now() + 300ms;
  EXPECT_FALSE(sem.try_acquire_until(until));
  EXPECT_GE(steady::now(), until) << "returned before its deadline";
  const auto before = steady::now();
  EXPECT_FALSE(sem.try_acquire_for(std::chrono::duration<double, std::milli>(150.5)));
  EXPECT_GE(steady::now() - before, 150ms);
  EXPECT_EQ(error_of([&] { sem.try_acquire_for(std::chrono::duration<double>(NAN)); }),
            errc::invalid_argument);

  // A release while it waits: it gets the permit.
  auto waiter =
      std::async(std::launch::async, [&] { return sem.try_acquire_until(steady::now() + 10s); });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw_, "redisson_sc:{sem}"); }, 5s));
  sem.release();
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(sem.available_permits(), 0);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(error_of([&] { sem.try_acquire_for(10s, stop.get_token()); }), errc::cancelled);

  // The permit-expirable semaphore's: a permit, or nullopt.
  auto pes = expirable(1);
  auto got = pes.try_acquire_for(-1ms);
  ASSERT_TRUE(got);
  EXPECT_EQ(pes.try_acquire_for(0ms), std::nullopt);
  EXPECT_EQ(pes.try_acquire_until(std::chrono::system_clock::now() - 1s), std::nullopt);
  const auto deadline = steady::now() + 200ms;
  EXPECT_EQ(pes.try_acquire_until(deadline, 5s), std::nullopt);
  EXPECT_GE(steady::now(), deadline);
  got.reset();
  auto leased = pes.try_acquire_for(1s, 5s);
  ASSERT_TRUE(leased);
  EXPECT_EQ(errors_->size(), 0u);
}
