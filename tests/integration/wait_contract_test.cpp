// SPDX-License-Identifier: Apache-2.0
// The contract (README, "The contract"), one table: every waiting operation of every type, each
// made to wait on something another owner holds, then run with an empty wait, a zero wait, a
// short wait and a negative one:
// - empty: for ever, except in try_* and poll, where it is one attempt;
// - zero: one attempt;
// - a wait that runs out: "not got" in a result that has room for it (false, nullopt,
//   acquired == false), else errc::not_acquired; never errc::timeout, which is Redis silent;
// - negative: errc::invalid_argument, before any I/O.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <asio/use_future.hpp>
#include <relock/client.hpp>
#include <relock/multi_lock.hpp>
#include <relock/red_lock.hpp>

#include "support/lock_env.hpp"

namespace wait_contract_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::test::redis_server;
using wait_t = std::optional<std::chrono::milliseconds>;

namespace {

struct outcome {
  std::error_code ec;
  bool got = false;
};

struct servers {
  redis_server a, b, c;
  relock::client one{relock::test::settings_for(a)};
  relock::client two{relock::test::settings_for(b)};
  relock::client three{relock::test::settings_for(c)};
  relock::owner me = relock::owner::unique();
  relock::owner other = relock::owner::unique();

  relock::red_lock red_lock(const std::string& name) {
    return relock::red_lock({one.lock(name), two.lock(name), three.lock(name)});
  }
};

// One waiting operation: how to make `name` unavailable, free it again, and start the
// operation on it with a wait (its answer, or the exception its start threw, as an outcome).
struct row {
  std::string op;
  bool answers;    // its result says whether it got it
  bool try_named;  // try_* or poll: an empty wait is one attempt
  bool has_wait;   // takes a wait at all (take does not)
  std::function<void(servers&, const std::string&)> block, unblock;
  std::function<std::future<outcome>(servers&, const std::string&, wait_t)> start;
};

template <class F>
std::future<outcome> started(F&& f) {
  try {
    return f();
  } catch (const relock::error& e) {
    std::promise<outcome> p;
    p.set_value({e.code(), false});
    return p.get_future();
  }
}

std::shared_ptr<std::promise<outcome>> made() { return std::make_shared<std::promise<outcome>>(); }

// A callback that fulfils the promise it shares.
auto fulfil(std::shared_ptr<std::promise<outcome>> p, bool answers) {
  return [p, answers](std::error_code ec, auto&&... result) {
    bool got = !ec;
    // A bool or an optional says whether it got it; a value (take's string) is what it got.
    if constexpr (sizeof...(result) == 1 &&
                  (std::is_constructible_v<bool, std::decay_t<decltype(result)>> && ...)) {
      if (answers) got = !ec && (static_cast<bool>(result) && ...);
    }
    p->set_value({ec, got});
  };
}

relock::lock_options with_wait(wait_t w) {
  relock::lock_options o;
  o.wait = w;
  return o;
}

std::vector<row> rows() {
  auto lock_block = [](servers& s, const std::string& n) {
    s.one.lock(n).async_lock(s.other, {}, asio::use_future).get();
  };
  auto lock_unblock = [](servers& s, const std::string& n) {
    s.one.lock(n).async_unlock(s.other, asio::use_future).get();
  };
  std::vector<row> r;
  r.push_back({"mutex::async_lock", false, false, true, lock_block, lock_unblock,
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.lock(n).async_lock(s.me, with_wait(w), fulfil(p, false));
                 return f;
               }});
  r.push_back({"mutex::async_try_lock", true, true, true, lock_block, lock_unblock,
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.lock(n).async_try_lock(s.me, with_wait(w),
                                              [p](std::error_code ec, bool acquired) {
                                                p->set_value({ec, !ec && acquired});
                                              });
                 return f;
               }});
  r.push_back({"fenced_lock::async_lock_and_get_token", false, false, true,
               [](servers& s, const std::string& n) {
                 s.one.fenced_lock(n).async_lock_and_get_token(s.other, {}, asio::use_future).get();
               },
               [](servers& s, const std::string& n) {
                 s.one.fenced_lock(n).async_unlock(s.other, asio::use_future).get();
               },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.fenced_lock(n).async_lock_and_get_token(
                     s.me, with_wait(w), [p](std::error_code ec, std::int64_t) {
                       p->set_value({ec, !ec});
                     });
                 return f;
               }});
  r.push_back({"fenced_lock::async_try_lock_and_get_token", true, true, true,
               [](servers& s, const std::string& n) {
                 s.one.fenced_lock(n).async_lock_and_get_token(s.other, {}, asio::use_future).get();
               },
               [](servers& s, const std::string& n) {
                 s.one.fenced_lock(n).async_unlock(s.other, asio::use_future).get();
               },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.fenced_lock(n).async_try_lock_and_get_token(
                     s.me, with_wait(w), [p](std::error_code ec, std::optional<std::int64_t> t) {
                       p->set_value({ec, !ec && t.has_value()});
                     });
                 return f;
               }});
  r.push_back({"multi_lock::async_lock", false, false, true, lock_block, lock_unblock,
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 relock::multi_lock(s.one.lock(n + ":free"), s.one.lock(n))
                     .async_lock(s.me, with_wait(w), fulfil(p, false));
                 return f;
               }});
  r.push_back({"multi_lock::async_try_lock", true, true, true, lock_block, lock_unblock,
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 relock::multi_lock(s.one.lock(n + ":free"), s.one.lock(n))
                     .async_try_lock(s.me, with_wait(w), [p](std::error_code ec, bool acquired) {
                       p->set_value({ec, !ec && acquired});
                     });
                 return f;
               }});
  r.push_back({"red_lock::async_acquire", true, false, true,
               [](servers& s, const std::string& n) {  // two of three: no quorum left
                 s.one.lock(n).async_lock(s.other, {}, asio::use_future).get();
                 s.two.lock(n).async_lock(s.other, {}, asio::use_future).get();
               },
               [](servers& s, const std::string& n) {
                 s.one.lock(n).async_unlock(s.other, asio::use_future).get();
                 s.two.lock(n).async_unlock(s.other, asio::use_future).get();
               },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.red_lock(n).async_acquire(s.me, with_wait(w),
                                             [p](std::error_code ec, relock::redlock_result r) {
                                               p->set_value({ec, !ec && r.acquired});
                                             });
                 return f;
               }});
  r.push_back({"semaphore::async_acquire", true, false, true,
               [](servers& s, const std::string& n) { s.one.semaphore(n).try_set_permits(0); },
               [](servers& s, const std::string& n) { s.one.semaphore(n).release(1); },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.semaphore(n).async_acquire(1, w, {}, fulfil(p, true));
                 return f;
               }});
  r.push_back(
      {"permit_expirable_semaphore::async_acquire", true, false, true,
       [](servers& s, const std::string& n) {
         s.one.permit_expirable_semaphore(n).try_set_permits(0);
       },
       [](servers& s, const std::string& n) { s.one.permit_expirable_semaphore(n).add_permits(1); },
       [](servers& s, const std::string& n, wait_t w) {
         auto p = made();
         auto f = p->get_future();
         relock::permit_options o;
         o.wait = w;
         s.one.permit_expirable_semaphore(n).async_acquire(std::move(o), fulfil(p, true));
         return f;
       }});
  r.push_back({"count_down_latch::async_await", true, false, true,
               [](servers& s, const std::string& n) { s.one.count_down_latch(n).try_set_count(1); },
               [](servers& s, const std::string& n) { s.one.count_down_latch(n).count_down(); },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.count_down_latch(n).async_await(w, {}, fulfil(p, true));
                 return f;
               }});
  r.push_back({"blocking_queue::async_poll", true, true, true, [](servers&, const std::string&) {},
               [](servers& s, const std::string& n) { s.one.blocking_queue(n).offer("v"); },
               [](servers& s, const std::string& n, wait_t w) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.blocking_queue(n).async_poll(w, {}, fulfil(p, true));
                 return f;
               }});
  r.push_back({"blocking_queue::async_take", false, false, false,
               [](servers&, const std::string&) {},
               [](servers& s, const std::string& n) { s.one.blocking_queue(n).offer("v"); },
               [](servers& s, const std::string& n, wait_t) {
                 auto p = made();
                 auto f = p->get_future();
                 s.one.blocking_queue(n).async_take({}, fulfil(p, false));
                 return f;
               }});
  return r;
}

class wait_contract : public ::testing::TestWithParam<row> {
 protected:
  servers s_;
  int names_ = 0;
  std::string fresh() { return "contract:" + std::to_string(++names_); }
};

std::string row_name(const ::testing::TestParamInfo<row>& info) {
  std::string n;
  for (char c : info.param.op) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

// What a wait that ran out (or one attempt that found it taken) must say.
void expect_not_got(const row& r, const outcome& o) {
  if (r.answers) {
    EXPECT_FALSE(o.ec) << o.ec.message();
    EXPECT_FALSE(o.got);
  } else {
    EXPECT_EQ(o.ec, errc::not_acquired) << o.ec.message();
  }
}

}  // namespace

TEST_P(wait_contract, an_empty_wait_is_for_ever_except_in_try_and_poll) {
  const row& r = GetParam();
  const auto name = fresh();
  r.block(s_, name);
  auto f = started([&] { return r.start(s_, name, std::nullopt); });
  if (r.try_named) {
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready) << "one attempt answers at once";
    expect_not_got(r, f.get());
    return;
  }
  EXPECT_EQ(f.wait_for(300ms), std::future_status::timeout) << "it should still be waiting";
  r.unblock(s_, name);
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  const auto o = f.get();
  EXPECT_FALSE(o.ec) << o.ec.message();
  EXPECT_TRUE(o.got);
}

TEST_P(wait_contract, a_zero_wait_is_one_attempt) {
  const row& r = GetParam();
  if (!r.has_wait) GTEST_SKIP() << r.op << " takes no wait";
  const auto name = fresh();
  r.block(s_, name);
  auto f = started([&] { return r.start(s_, name, 0ms); });
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  expect_not_got(r, f.get());
}

TEST_P(wait_contract, a_wait_that_runs_out_is_not_got_never_timeout) {
  const row& r = GetParam();
  if (!r.has_wait) GTEST_SKIP() << r.op << " takes no wait";
  const auto name = fresh();
  r.block(s_, name);
  const auto began = std::chrono::steady_clock::now();
  auto f = started([&] { return r.start(s_, name, 200ms); });
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_GE(std::chrono::steady_clock::now() - began, 190ms);
  expect_not_got(r, f.get());
}

TEST_P(wait_contract, a_free_resource_is_got_with_any_wait) {
  const row& r = GetParam();
  for (wait_t w : {wait_t{}, wait_t{0ms}, wait_t{200ms}}) {
    if (!r.has_wait && w) continue;
    const auto name = fresh();
    r.block(s_, name);
    r.unblock(s_, name);
    auto f = started([&] { return r.start(s_, name, w); });
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    const auto o = f.get();
    EXPECT_FALSE(o.ec) << o.ec.message();
    EXPECT_TRUE(o.got) << (w ? std::to_string(w->count()) + " ms" : "empty");
  }
}

TEST_P(wait_contract, a_negative_wait_is_invalid_before_any_io) {
  const row& r = GetParam();
  if (!r.has_wait) GTEST_SKIP() << r.op << " takes no wait";
  const auto name = fresh();
  auto f = started([&] { return r.start(s_, name, -1ms); });
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(f.get().ec, errc::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(every_waiting_operation, wait_contract, ::testing::ValuesIn(rows()),
                         row_name);

}  // namespace wait_contract_test
