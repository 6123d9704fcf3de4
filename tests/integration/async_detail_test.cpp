// SPDX-License-Identifier: Apache-2.0
// The server's text reaches async callers (README, "The contract", errors carry words): every
// async operation of every type, wrapped in relock::with_detail, fails with a relock::error
// whose code is the one its synchronous form throws and whose what() has words, not just the
// code's message. Also: the adapter keeps success results, a coroutine catches the same
// relock::error, a deferred operation on a temporary handle works, and Asio's cancellation
// reaches the operation through it.
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <relock/client.hpp>
#include <relock/multi_lock.hpp>
#include <relock/with_detail.hpp>

#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::with_detail;
using relock::test::raw_client;
using relock::test::redis_server;

namespace {

// What a call threw: its code and words; no code when it returned.
struct thrown {
  std::error_code ec;
  std::string what;
};

template <class F>
thrown thrown_by(F f) {
  try {
    f();
  } catch (const relock::error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

// A with_detail callback that reads the exception where it runs and hands on its code and words,
// never the exception: libstdc++ counts an exception's references where TSan cannot see them, so
// one made on relock's thread and freed on the test's reads as a race (support/error_of.hpp).
struct hear {
  std::shared_ptr<std::promise<thrown>> heard;
  template <class... Results>
  void operator()(std::exception_ptr e, Results&&...) const {
    heard->set_value(thrown_by([&] {
      if (e) std::rethrow_exception(e);
    }));
  }
};
using hear_token = relock::with_detail_t<hear>;

// What `start(token)` completed with, waited for.
template <class Start>
thrown heard_from(Start start) {
  auto heard = std::make_shared<std::promise<thrown>>();
  auto outcome = heard->get_future();
  start(with_detail(hear{heard}));
  return outcome.get();
}

// One async operation, on a name that holds a Redis string: the sync form, and the async form
// with a with_detail token.
struct row {
  std::string op;
  std::function<void(relock::client&, const std::string&)> sync;
  std::function<void(relock::client&, const std::string&, hear_token)> async;
};

std::vector<row> rows() {
  using relock::client;
  const auto me = relock::owner::unique();
  return {
      {"mutex.async_lock", [](client& c, const std::string& n) { c.lock(n).lock(); },
       [=](client& c, const std::string& n, hear_token t) { c.lock(n).async_lock(me, {}, t); }},
      {"mutex.async_try_lock", [](client& c, const std::string& n) { c.lock(n).try_lock(); },
       [=](client& c, const std::string& n, hear_token t) { c.lock(n).async_try_lock(me, {}, t); }},
      {"fair mutex.async_lock", [](client& c, const std::string& n) { c.fair_lock(n).lock(); },
       [=](client& c, const std::string& n, hear_token t) {
         c.fair_lock(n).async_lock(me, {}, t);
       }},
      {"write lock.async_lock",
       [](client& c, const std::string& n) { c.read_write_lock(n).write_lock().lock(); },
       [=](client& c, const std::string& n, hear_token t) {
         c.read_write_lock(n).write_lock().async_lock(me, {}, t);
       }},
      {"fenced_lock.async_lock_and_get_token",
       [](client& c, const std::string& n) { (void)c.fenced_lock(n).lock_and_get_token(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.fenced_lock(n).async_lock_and_get_token(me, {}, t);
       }},
      {"fenced_lock.async_try_lock_and_get_token",
       [](client& c, const std::string& n) { (void)c.fenced_lock(n).try_lock_and_get_token(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.fenced_lock(n).async_try_lock_and_get_token(me, {}, t);
       }},
      {"multi_lock.async_lock",
       [](client& c, const std::string& n) { relock::multi_lock({c.lock(n)}).lock(); },
       [=](client& c, const std::string& n, hear_token t) {
         relock::multi_lock({c.lock(n)}).async_lock(me, {}, t);
       }},
      {"semaphore.async_acquire", [](client& c, const std::string& n) { c.semaphore(n).acquire(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.semaphore(n).async_acquire(1, std::nullopt, {}, t);
       }},
      {"semaphore.async_release", [](client& c, const std::string& n) { c.semaphore(n).release(); },
       [=](client& c, const std::string& n, hear_token t) { c.semaphore(n).async_release(1, t); }},
      {"permit_expirable_semaphore.async_acquire",
       [](client& c, const std::string& n) { (void)c.permit_expirable_semaphore(n).acquire(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.permit_expirable_semaphore(n).async_acquire({}, t);
       }},
      {"permit_expirable_semaphore.async_release",
       [](client& c, const std::string& n) {
         c.permit_expirable_semaphore(n).release(std::string(32, 'a'));
       },
       [=](client& c, const std::string& n, hear_token t) {
         c.permit_expirable_semaphore(n).async_release(std::string(32, 'a'), t);
       }},
      {"count_down_latch.async_await",
       [](client& c, const std::string& n) { c.count_down_latch(n).await(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.count_down_latch(n).async_await(std::nullopt, {}, t);
       }},
      {"count_down_latch.async_count_down",
       [](client& c, const std::string& n) { c.count_down_latch(n).count_down(); },
       [=](client& c, const std::string& n, hear_token t) {
         c.count_down_latch(n).async_count_down(t);
       }},
      {"blocking_queue.async_offer",
       [](client& c, const std::string& n) { c.blocking_queue(n).offer("v"); },
       [=](client& c, const std::string& n, hear_token t) {
         c.blocking_queue(n).async_offer("v", t);
       }},
      {"blocking_queue.async_poll",
       [](client& c, const std::string& n) { (void)c.blocking_queue(n).poll(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.blocking_queue(n).async_poll(std::nullopt, {}, t);
       }},
      {"blocking_queue.async_take",
       [](client& c, const std::string& n) { (void)c.blocking_queue(n).take(); },
       [=](client& c, const std::string& n, hear_token t) {
         (void)c.blocking_queue(n).async_take({}, t);
       }},
      {"delayed_queue.async_offer",
       [](client& c, const std::string& n) { c.delayed_queue(n).offer("v", 0ms); },
       [=](client& c, const std::string& n, hear_token t) {
         c.delayed_queue(n).async_offer("v", 0ms, t);
       }},
  };
}

class async_detail : public ::testing::Test {
 protected:
  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  relock::client client_{relock::test::settings_for(server_)};
  relock::owner me_ = relock::owner::unique();
};

}  // namespace

TEST_F(async_detail, every_async_operation_fails_with_the_words_its_sync_form_has) {
  for (const auto& r : rows()) {
    SCOPED_TRACE(r.op);
    const std::string name = "detail:" + r.op;
    raw_.command({"SET", name, "a string"});
    const auto sync = thrown_by([&] { r.sync(client_, name); });
    const auto async = heard_from([&](hear_token t) { r.async(client_, name, t); });
    ASSERT_TRUE(sync.ec) << "the sync form did not fail";
    EXPECT_EQ(async.ec, sync.ec) << async.what;
    EXPECT_FALSE(async.what.empty());
    EXPECT_NE(async.what, async.ec.message()) << "no words beyond the code";
    EXPECT_EQ(raw_.command({"GET", name}).str, "a string") << "the failure changed the data";
  }
}

TEST_F(async_detail, an_unlock_by_another_owner_names_it_and_an_empty_permit_says_so) {
  auto m = client_.lock("detail:owned");
  m.lock();
  const auto other = heard_from([&](hear_token t) { m.async_unlock(relock::owner::unique(), t); });
  EXPECT_EQ(other.ec, errc::not_owner);
  EXPECT_NE(other.what, other.ec.message());
  m.unlock();

  relock::permit empty;
  const auto nothing = heard_from([&](hear_token t) { empty.async_release(t); });
  EXPECT_EQ(nothing.ec, errc::not_owner);
  EXPECT_NE(nothing.what.find("owns nothing"), std::string::npos) << nothing.what;

  const auto bad_name = heard_from([&](hear_token t) { client_.async_inspect("", t); });
  EXPECT_EQ(bad_name.ec, errc::invalid_argument);
  EXPECT_NE(bad_name.what, bad_name.ec.message());
}

TEST_F(async_detail, success_keeps_the_results_and_a_null_exception) {
  std::promise<std::exception_ptr> failed;
  std::promise<std::int64_t> token;
  client_.fenced_lock("detail:ok")
      .async_lock_and_get_token(me_, {}, with_detail([&](std::exception_ptr e, std::int64_t t) {
                                  failed.set_value(e);
                                  token.set_value(t);
                                }));
  EXPECT_EQ(failed.get_future().get(), nullptr);
  EXPECT_GT(token.get_future().get(), 0);
  EXPECT_TRUE(client_.fenced_lock("detail:ok")
                  .async_try_lock(me_, {}, with_detail(asio::use_future))
                  .get());
  client_.fenced_lock("detail:ok").async_unlock(me_, with_detail(asio::use_future)).get();
  client_.fenced_lock("detail:ok").async_unlock(me_, with_detail(asio::use_future)).get();
  EXPECT_EQ(raw_.command({"EXISTS", "detail:ok"}).integer, 0);
}

TEST_F(async_detail, a_coroutine_catches_the_relock_error_and_a_deferred_temporary_runs) {
  raw_.command({"SET", "detail:co", "a string"});
  asio::io_context mine;
  std::optional<thrown> caught;
  asio::co_spawn(
      mine,
      [&]() -> asio::awaitable<void> {
        try {
          co_await client_.lock("detail:co").async_lock(me_, {}, with_detail(asio::use_awaitable));
        } catch (const relock::error& e) {
          caught = thrown{e.code(), e.what()};
        }
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  mine.run_for(10s);
  ASSERT_TRUE(caught);
  EXPECT_EQ(caught->ec, errc::wrong_type);
  EXPECT_NE(caught->what, caught->ec.message());

  auto op =
      client_.semaphore("detail:co").async_release(1, with_detail(asio::experimental::deferred));
  const auto later = heard_from([&](hear_token t) { std::move(op)(t.token); });
  EXPECT_EQ(later.ec, errc::wrong_type);
  EXPECT_NE(later.what, later.ec.message());
}

TEST_F(async_detail, asio_cancellation_reaches_the_wait_through_the_adapter) {
  auto held = client_.lock("detail:held");
  held.lock();
  asio::io_context mine;
  auto work = asio::make_work_guard(mine);
  asio::cancellation_signal signal;
  std::optional<thrown> ended;
  client_.lock("detail:held")
      .async_lock(me_, {},
                  with_detail(asio::bind_executor(
                      mine, asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e) {
                        ended = thrown_by([&] {
                          if (e) std::rethrow_exception(e);
                        });
                        work.reset();
                      }))));
  std::thread runner([&] { mine.run_for(20s); });
  EXPECT_TRUE(relock::test::wait_until(
      [&] { return relock::test::subscribed(raw_, "redisson_lock__channel:{detail:held}"); }, 5s));
  // Emitted on the handler's executor, where relock clears the slot before the handler runs.
  asio::post(mine, [&] { signal.emit(asio::cancellation_type::terminal); });
  runner.join();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->ec, errc::cancelled);
  held.unlock();
  EXPECT_EQ(raw_.command({"EXISTS", "detail:held"}).integer, 0);
}
