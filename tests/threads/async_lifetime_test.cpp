// SPDX-License-Identifier: Apache-2.0
// Async operations keep what they need alive, and every waiting one follows Asio's per-operation
// cancellation (issue #33):
// - an operation made on a temporary handle with a deferred token, and started after the handle
//   is gone, completes as on a named handle (every type; ASan in ./scripts/test catches a
//   handle captured by reference);
// - an awaited operation on a temporary completes;
// - a cancellation emitted on the handler's slot (bind_cancellation_slot, or the awaitable
//   operator || losing to a timer) ends every kind of wait with errc::cancelled, leaving no hold,
//   no permit and no waiter behind.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <relock/client.hpp>
#include <relock/multi_lock.hpp>
#include <relock/red_lock.hpp>

#include "support/lock_env.hpp"
#include "support/server_state.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::raw_client;
using relock::test::redis_server;

namespace {

constexpr auto deferred = asio::experimental::deferred;

class async_lifetime : public ::testing::Test {
 protected:
  // The tests' own executor. Declared first, so it outlives the clients: relock's thread may
  // still be inside post() to it when a handler has run (detail/completion.hpp).
  asio::io_context mine_;
  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  relock::client client_{relock::test::settings_for(server_)};
  relock::owner me_ = relock::owner::unique();
  // A red_lock's other two servers.
  redis_server second_, third_;
  relock::client client2_{relock::test::settings_for(second_)};
  relock::client client3_{relock::test::settings_for(third_)};

  relock::red_lock red_lock(const std::string& name) {
    return relock::red_lock({client_.lock(name), client2_.lock(name), client3_.lock(name)});
  }
};

}  // namespace

TEST_F(async_lifetime, deferred_operations_made_on_temporaries_run_after_the_handles_are_gone) {
  // Each operation is made from a handle that dies at the end of its statement, then started.
  auto lock = client_.lock("life:lock").async_lock(me_, {}, deferred);
  auto fenced = client_.fenced_lock("life:fenced").async_lock_and_get_token(me_, {}, deferred);
  auto multi = relock::multi_lock(client_.lock("life:m1"), client_.lock("life:m2"))
                   .async_lock(me_, {}, deferred);
  auto red = red_lock("life:red").async_acquire(me_, {}, deferred);
  client_.semaphore("life:sem").try_set_permits(1);
  auto acquire = client_.semaphore("life:sem").async_acquire(1, std::nullopt, {}, deferred);
  client_.permit_expirable_semaphore("life:psem").try_set_permits(1);
  auto permit = client_.permit_expirable_semaphore("life:psem").async_acquire({}, deferred);
  client_.count_down_latch("life:latch").try_set_count(1);
  auto count_down = client_.count_down_latch("life:latch").async_count_down(deferred);
  auto offer = client_.blocking_queue("life:queue").async_offer("v", deferred);
  auto delayed = client_.delayed_queue("life:queue").async_offer("w", 1ms, deferred);
  auto inspect = client_.async_inspect("life:lock", deferred);

  std::move(lock)(asio::use_future).get();
  EXPECT_GT(std::move(fenced)(asio::use_future).get(), 0);
  std::move(multi)(asio::use_future).get();
  EXPECT_TRUE(std::move(red)(asio::use_future).get().acquired);
  EXPECT_TRUE(std::move(acquire)(asio::use_future).get());
  EXPECT_TRUE(std::move(permit)(asio::use_future).get().has_value());
  std::move(count_down)(asio::use_future).get();
  std::move(offer)(asio::use_future).get();
  std::move(delayed)(asio::use_future).get();
  EXPECT_TRUE(std::move(inspect)(asio::use_future).get().locked());

  // And the waits, made on temporaries too.
  auto await = client_.count_down_latch("life:latch").async_await(5s, {}, deferred);
  auto poll = client_.blocking_queue("life:queue").async_poll(5s, {}, deferred);
  auto unlock = client_.lock("life:lock").async_unlock(me_, deferred);
  EXPECT_TRUE(std::move(await)(asio::use_future).get());
  EXPECT_EQ(std::move(poll)(asio::use_future).get(), "v");
  std::move(unlock)(asio::use_future).get();
  EXPECT_EQ(raw_.command({"EXISTS", "life:lock"}).integer, 0);
}

TEST_F(async_lifetime, an_operation_awaited_on_a_temporary_completes) {
  std::optional<std::int64_t> token;
  asio::co_spawn(
      mine_,
      [&]() -> asio::awaitable<void> {
        token = co_await client_.fenced_lock("life:awaited")
                    .async_lock_and_get_token(me_, {}, asio::use_awaitable);
        co_await client_.fenced_lock("life:awaited").async_unlock(me_, asio::use_awaitable);
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  mine_.run_for(10s);
  EXPECT_TRUE(token && *token > 0);
  EXPECT_EQ(raw_.command({"EXISTS", "life:awaited"}).integer, 0);
}

namespace {

// Starts `start(handler)` with a handler bound to a cancellation slot and to `mine`, emits a
// cancellation of `type` on `mine` once the operation is waiting, and returns its error code.
template <class Start>
std::error_code cancelled_wait(asio::io_context& mine, Start start, asio::cancellation_type type,
                               raw_client& raw, const std::string& channel) {
  mine.restart();
  auto work = asio::make_work_guard(mine);
  asio::cancellation_signal signal;
  std::optional<std::error_code> result;
  start(asio::bind_executor(
      mine, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, auto&&...) {
        result = ec;
        work.reset();
      })));
  std::thread runner([&] { mine.run_for(20s); });
  // Waiting: subscribed on its channel (a lock, a semaphore, a latch), or blocked in its BLPOP
  // (the queue, whose channel is empty).
  relock::test::wait_until(
      [&] {
        if (channel.empty()) return relock::test::blocked_clients(raw) > 0;
        return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer > 0;
      },
      5s);
  asio::post(mine, [&] { signal.emit(type); });
  runner.join();
  return result.value_or(make_error_code(errc::timeout));
}

}  // namespace

TEST_F(async_lifetime, a_cancellation_on_the_slot_ends_every_kind_of_wait_leaving_nothing) {
  const auto other = relock::owner::unique();
  auto held = client_.lock("cancel:lock");
  held.async_lock(other, {}, asio::use_future).get();
  auto fenced_held = client_.fenced_lock("cancel:fenced");
  fenced_held.async_lock_and_get_token(other, {}, asio::use_future).get();
  client_.semaphore("cancel:sem").try_set_permits(1);
  client_.semaphore("cancel:sem").acquire(1);
  client_.permit_expirable_semaphore("cancel:psem").try_set_permits(1);
  auto taken_permit = client_.permit_expirable_semaphore("cancel:psem").acquire();
  client_.count_down_latch("cancel:latch").try_set_count(1);

  for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                    asio::cancellation_type::total}) {
    SCOPED_TRACE(static_cast<int>(type));
    EXPECT_EQ(
        cancelled_wait(
            mine_, [&](auto h) { client_.lock("cancel:lock").async_lock(me_, {}, std::move(h)); },
            type, raw_, "redisson_lock__channel:{cancel:lock}"),
        errc::cancelled);
    EXPECT_EQ(cancelled_wait(
                  mine_,
                  [&](auto h) {
                    client_.lock("cancel:lock").async_try_lock(me_, {.wait = 30s}, std::move(h));
                  },
                  type, raw_, "redisson_lock__channel:{cancel:lock}"),
              errc::cancelled);
    EXPECT_EQ(
        cancelled_wait(
            mine_,
            [&](auto h) {
              client_.fenced_lock("cancel:fenced").async_lock_and_get_token(me_, {}, std::move(h));
            },
            type, raw_, "redisson_lock__channel:{cancel:fenced}"),
        errc::cancelled);
    EXPECT_EQ(cancelled_wait(
                  mine_,
                  [&](auto h) {
                    relock::multi_lock(client_.lock("cancel:free"), client_.lock("cancel:lock"))
                        .async_lock(me_, {}, std::move(h));
                  },
                  type, raw_, "redisson_lock__channel:{cancel:lock}"),
              errc::cancelled);
    EXPECT_EQ(cancelled_wait(
                  mine_,
                  [&](auto h) {
                    red_lock("cancel:lock").async_acquire(me_, {.wait = 30s}, std::move(h));
                  },
                  type, raw_, "redisson_lock__channel:{cancel:lock}"),
              errc::cancelled);
    EXPECT_EQ(
        cancelled_wait(
            mine_,
            [&](auto h) {
              client_.semaphore("cancel:sem").async_acquire(1, std::nullopt, {}, std::move(h));
            },
            type, raw_, "redisson_sc:{cancel:sem}"),
        errc::cancelled);
    EXPECT_EQ(
        cancelled_wait(
            mine_,
            [&](auto h) {
              client_.permit_expirable_semaphore("cancel:psem").async_acquire({}, std::move(h));
            },
            type, raw_, "redisson_sc:{cancel:psem}"),
        errc::cancelled);
    EXPECT_EQ(
        cancelled_wait(
            mine_,
            [&](auto h) {
              client_.count_down_latch("cancel:latch").async_await(std::nullopt, {}, std::move(h));
            },
            type, raw_, "redisson_countdownlatch__channel__{cancel:latch}"),
        errc::cancelled);
    EXPECT_EQ(
        cancelled_wait(
            mine_,
            [&](auto h) { client_.blocking_queue("cancel:queue").async_take({}, std::move(h)); },
            type, raw_, ""),
        errc::cancelled);
  }

  // Nothing of the waiters is left: the holds are the holders' alone, the permits all taken by
  // the first takers, and a value offered now is there for the next taker.
  EXPECT_EQ(raw_.command({"HLEN", "cancel:lock"}).integer, 1);
  for (auto* other_server : {&second_, &third_}) {  // the red_lock's members there, given back
    EXPECT_EQ(raw_client::to(*other_server).command({"EXISTS", "cancel:lock"}).integer, 0);
  }
  EXPECT_EQ(raw_.command({"EXISTS", "cancel:free"}).integer, 0);
  EXPECT_EQ(raw_.command({"HLEN", "cancel:fenced"}).integer, 1);
  EXPECT_EQ(raw_.command({"GET", "cancel:sem"}).str, "0");
  EXPECT_EQ(client_.permit_expirable_semaphore("cancel:psem").available_permits(), 0);
  client_.blocking_queue("cancel:queue").offer("after");
  EXPECT_EQ(client_.blocking_queue("cancel:queue").poll(), "after");
  taken_permit.release();
}

TEST_F(async_lifetime, a_wait_that_loses_to_a_timer_under_the_awaitable_or_leaves_no_hold) {
  using namespace asio::experimental::awaitable_operators;
  const auto other = relock::owner::unique();
  auto held = client_.lock("race:lock");
  held.async_lock(other, {}, asio::use_future).get();
  std::optional<std::size_t> winner;
  asio::co_spawn(
      mine_,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(mine_, 300ms);
        auto r = co_await (client_.lock("race:lock").async_lock(me_, {}, asio::use_awaitable) ||
                           timer.async_wait(asio::use_awaitable));
        winner = r.index();
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  mine_.run_for(10s);
  EXPECT_EQ(winner, 1U);  // the timer
  EXPECT_EQ(raw_.command({"HLEN", "race:lock"}).integer, 1);
  EXPECT_TRUE(held.is_held_by(other));
  held.async_unlock(other, asio::use_future).get();
  // The cancelled waiter took nothing: the lock is free for anyone now.
  EXPECT_TRUE(client_.lock("race:lock").try_lock());
}
