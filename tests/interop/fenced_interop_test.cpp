// SPDX-License-Identifier: Apache-2.0
// relock's fenced lock (client::fenced_lock, relock::fenced_lock) against the real Redisson's
// RFencedLock (getFencedLock), issue #17. RFencedLock exists from Redisson 4.0 (3.18.1 has no
// getFencedLock: its driver answers "unsupported"), so these tests run once per built 4.x driver
// only: fenced_jars() leaves the 3.x jars out, and fails the suite (never skips it) when no 4.x
// jar is built.
//
// Both languages advance one counter, redisson_lock_token:{name}, on every acquisition,
// re-entries included; a refused try and a plain reentrant lock on the same name leave it alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <asio/use_future.hpp>
#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

// The driver jars of Redisson 4.x and later (a jar whose version cannot be read is kept: its
// test then says what it is). None: one "missing: ..." entry, which fails every test.
std::vector<std::string> fenced_jars() {
  std::vector<std::string> out;
  for (const auto& jar : redisson_driver::jar_params()) {
    const std::string v = redisson_driver::version_of_jar(jar);
    if (jar.rfind("missing", 0) == 0 || v.empty() || std::stoi(v) >= 4) out.push_back(jar);
  }
  if (out.empty()) {
    out.push_back(
        "missing: no Redisson 4.x driver jar (RFencedLock exists from 4.0); build it with "
        "tests/interop/redisson/prepare");
  }
  return out;
}

// How a fenced acquire by an explicit relock owner ended, and when its completion ran.
struct token_outcome {
  std::error_code ec;
  std::optional<std::int64_t> token;
  steady::time_point at;
};

std::future<token_outcome> try_token_as(relock::fenced_lock& lock, relock::owner who,
                                        std::chrono::milliseconds wait) {
  auto done = std::make_shared<std::promise<token_outcome>>();
  auto result = done->get_future();
  relock::lock_options options;
  options.wait = wait;
  lock.async_try_lock_and_get_token(who, std::move(options),
                                    [done](std::error_code ec, std::optional<std::int64_t> token) {
                                      done->set_value({ec, token, steady::now()});
                                    });
  return result;
}

class fenced_interop : public redisson_fixture {
 protected:
  static std::string token_key(const std::string& name) {
    return "redisson_lock_token:{" + name + "}";
  }
  // The counter as Redis holds it (0 when absent).
  std::int64_t counter(const std::string& name) {
    auto r = raw_.command({"GET", token_key(name)});
    return r.is_nil() ? 0 : std::stoll(r.str);
  }
  // Java's getToken().
  std::int64_t java_token(redisson_driver& j, const std::string& name) {
    return j.call_ok("t", "gettoken fenced:" + name).get<std::int64_t>();
  }
};

}  // namespace

// Java and C++ take turns, each acquiring and re-entering: every acquisition gets the next
// value of the one counter (1, 2, 3... across both languages), a refused try on either side
// gets none and advances nothing, and fence() is the C++ hold's outermost token.
TEST_P(fenced_interop, tokens_increase_by_one_per_acquisition_as_java_and_relock_take_turns) {
  auto j = java();
  relock::client client(settings());
  auto fenced = client.fenced_lock("fe");
  const auto ja = j.owner_field("a");
  const auto me = fenced.owner_field(relock::owner::current_thread());
  std::vector<std::int64_t> tokens;

  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Java acquires and re-enters.
    tokens.push_back(j.call_ok("a", "lockandgettoken fenced:fe").get<std::int64_t>());
    tokens.push_back(j.call_ok("a", "trylockandgettoken fenced:fe 0").get<std::int64_t>());
    EXPECT_EQ(hash_of("fe"), (fields{{ja, "2"}}));
    EXPECT_EQ(java_token(j, "fe"), tokens.back());
    EXPECT_EQ(fenced.token(), tokens.back());
    // C++ is refused, at once and after waiting: no token, and the counter stays.
    EXPECT_EQ(fenced.try_lock_and_get_token(), std::nullopt);
    EXPECT_EQ(fenced.try_lock_and_get_token(200ms), std::nullopt);
    EXPECT_FALSE(fenced.try_lock());
    EXPECT_EQ(counter("fe"), tokens.back());
    EXPECT_EQ(fenced.fence(), std::nullopt);
    ASSERT_EQ(j.call_ok("a", "unlock fenced:fe"), true);
    ASSERT_EQ(j.call_ok("a", "unlock fenced:fe"), true);
    EXPECT_FALSE(exists("fe"));

    // C++ acquires and re-enters, each way it can.
    tokens.push_back(fenced.lock_and_get_token());
    const auto outermost = tokens.back();
    auto again = fenced.try_lock_and_get_token();
    ASSERT_TRUE(again);
    tokens.push_back(*again);
    fenced.lock();  // a plain re-entry through the mutex surface counts too
    tokens.push_back(fenced.token());
    EXPECT_EQ(hash_of("fe"), (fields{{me, "3"}}));
    EXPECT_EQ(fenced.fence(), outermost);
    EXPECT_EQ(java_token(j, "fe"), tokens.back());
    // Java is refused, at once and after waiting: null, and the counter stays.
    EXPECT_TRUE(j.call_ok("b", "trylockandgettoken fenced:fe 0").is_null());
    auto waited = j.call("b", "trylockandgettoken fenced:fe 200");
    EXPECT_TRUE(waited["result"].is_null()) << waited.dump();
    EXPECT_GE(took_ns(waited), 190'000'000);
    EXPECT_EQ(j.call_ok("b", "trylock fenced:fe 0"), false);
    EXPECT_EQ(counter("fe"), tokens.back());
    fenced.unlock();
    fenced.unlock();
    EXPECT_EQ(fenced.fence(), outermost);  // still held, by its outermost acquisition
    fenced.unlock();
    EXPECT_EQ(fenced.fence(), std::nullopt);
    EXPECT_FALSE(exists("fe"));
  }

  ASSERT_EQ(tokens.size(), 15u);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(tokens[i], static_cast<std::int64_t>(i + 1)) << "token #" << i;
  }
  EXPECT_EQ(counter("fe"), 15);
  EXPECT_EQ(raw_.command({"PTTL", token_key("fe")}).integer, -1);  // the counter never expires
}

// A waiter on either side wakes on the other side's release (within a second; the holds had
// 29 s left) and its token is the next one.
TEST_P(fenced_interop, a_waiter_on_either_side_wakes_on_the_others_release_with_the_next_token) {
  auto j = java();
  relock::client client(settings());
  auto fenced = client.fenced_lock("fw");
  const auto c = relock::owner::unique();

  const auto t1 = j.call_ok("a", "lockandgettoken fenced:fw").get<std::int64_t>();
  auto cpp = try_token_as(fenced, c, 20s);
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("fw")) == 1; }, 10s));
  auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock fenced:fw"), true);
  ASSERT_EQ(cpp.wait_for(10s), std::future_status::ready);
  auto o = cpp.get();
  ASSERT_FALSE(o.ec) << o.ec.message();
  ASSERT_TRUE(o.token);
  EXPECT_EQ(*o.token, t1 + 1);
  EXPECT_LT(o.at - released, woken_within);
  EXPECT_EQ(fenced.fence(c), t1 + 1);

  // relock's waiter has left the channel; now Java waits on the C++ hold.
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("fw")) == 0; }, 10s));
  auto java_wait = j.send("b", "trylockandgettoken fenced:fw 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("fw")) == 1; }, 10s));
  released = steady::now();
  fenced.async_unlock(c, asio::use_future).get();
  auto r = j.wait_reply(java_wait, 10s);
  ASSERT_TRUE(r["result"].is_number_integer()) << r.dump();
  EXPECT_EQ(r["result"].get<std::int64_t>(), t1 + 2);
  EXPECT_LT(ns_after(released, r), std::chrono::nanoseconds(woken_within).count());
  EXPECT_EQ(fenced.token(), t1 + 2);
  ASSERT_EQ(j.call_ok("b", "unlock fenced:fw"), true);
  EXPECT_FALSE(exists("fw"));
}

// relock's plain reentrant lock (client::lock) on a fenced lock's name: it keeps Java's fenced
// lock out and is kept out by it, its waiter wakes on the fenced release (same channel), and
// none of its acquisitions advance the counter. Java's plain RLock and relock's fenced lock
// exclude each other the same way.
TEST_P(fenced_interop, a_plain_lock_on_the_same_name_excludes_and_never_advances_the_token) {
  auto j = java();
  relock::client client(settings());
  auto plain = client.lock("mixed");
  auto fenced = client.fenced_lock("mixed");
  const auto ja = j.owner_field("a");

  // Java's fenced hold keeps relock's plain lock out.
  const auto t1 = j.call_ok("a", "lockandgettoken fenced:mixed").get<std::int64_t>();
  EXPECT_FALSE(plain.try_lock());
  auto started = steady::now();
  EXPECT_FALSE(plain.try_lock(300ms));
  EXPECT_GE(steady::now() - started, 300ms);
  EXPECT_TRUE(plain.is_held_by(ja));

  // A plain waiter wakes on the fenced release.
  auto waiter = try_on_thread(plain, 20s);
  ASSERT_TRUE(wait_until([&] { return subscribers(lock_channel("mixed")) == 1; }, 10s));
  auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock fenced:mixed"), true);
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  auto [got, at] = waiter.get();
  EXPECT_TRUE(got);
  EXPECT_LT(at - released, woken_within);
  EXPECT_EQ(counter("mixed"), t1);

  // relock's plain hold (re-entered) keeps Java's fenced lock out, and relock's fenced lock
  // for any other owner.
  plain.lock();
  plain.lock();
  EXPECT_TRUE(j.call_ok("a", "trylockandgettoken fenced:mixed 0").is_null());
  auto waited = j.call("a", "trylockandgettoken fenced:mixed 300");
  EXPECT_TRUE(waited["result"].is_null()) << waited.dump();
  EXPECT_GE(took_ns(waited), 290'000'000);
  EXPECT_EQ(j.call_ok("a", "trylock fenced:mixed 0"), false);
  auto other =
      fenced.async_try_lock_and_get_token(relock::owner::unique(), {}, asio::use_future).get();
  EXPECT_EQ(other, std::nullopt);
  EXPECT_EQ(counter("mixed"), t1);
  EXPECT_EQ(fenced.token(), t1);
  EXPECT_EQ(java_token(j, "mixed"), t1);
  plain.unlock();
  plain.unlock();
  EXPECT_FALSE(exists("mixed"));

  // Java's plain RLock keeps relock's fenced lock out; the counter stays.
  ASSERT_EQ(j.call_ok("b", "lock lock:mixed"), true);
  EXPECT_EQ(fenced.try_lock_and_get_token(), std::nullopt);
  EXPECT_EQ(fenced.try_lock_and_get_token(300ms), std::nullopt);
  EXPECT_EQ(counter("mixed"), t1);
  ASSERT_EQ(j.call_ok("b", "unlock lock:mixed"), true);

  // The next fenced acquisition, either language, gets the next token: plain holds took none.
  EXPECT_EQ(fenced.lock_and_get_token(), t1 + 1);
  EXPECT_EQ(j.call_ok("b", "trylock lock:mixed 0"), false);
  fenced.unlock();
  EXPECT_EQ(j.call_ok("a", "lockandgettoken fenced:mixed").get<std::int64_t>(), t1 + 2);
  ASSERT_EQ(j.call_ok("a", "unlock fenced:mixed"), true);
  EXPECT_EQ(counter("mixed"), t1 + 2);
}

// relock's token() and Java's getToken() read the same counter: 0 before any acquisition, the
// last token handed out by either side, and a value written to the key by hand, after which
// both sides hand out the values that follow it.
TEST_P(fenced_interop, relock_token_and_java_get_token_read_the_same_counter) {
  auto j = java();
  relock::client client(settings());
  auto fenced = client.fenced_lock("shared-counter");

  EXPECT_EQ(fenced.token(), 0);
  EXPECT_EQ(java_token(j, "shared-counter"), 0);
  EXPECT_FALSE(exists(token_key("shared-counter")));

  EXPECT_EQ(j.call_ok("a", "lockandgettoken fenced:shared-counter").get<std::int64_t>(), 1);
  EXPECT_EQ(fenced.token(), 1);
  ASSERT_EQ(j.call_ok("a", "unlock fenced:shared-counter"), true);

  raw_.command({"SET", token_key("shared-counter"), "41"});
  EXPECT_EQ(fenced.token(), 41);
  EXPECT_EQ(java_token(j, "shared-counter"), 41);

  EXPECT_EQ(fenced.lock_and_get_token(), 42);
  EXPECT_EQ(java_token(j, "shared-counter"), 42);
  EXPECT_EQ(fenced.fence(), 42);
  fenced.unlock();
  EXPECT_EQ(j.call_ok("a", "lockandgettoken fenced:shared-counter").get<std::int64_t>(), 43);
  EXPECT_EQ(fenced.token(), 43);
  EXPECT_EQ(java_token(j, "shared-counter"), 43);
  ASSERT_EQ(j.call_ok("a", "unlock fenced:shared-counter"), true);
  EXPECT_EQ(counter("shared-counter"), 43);
  // Released: the lock is gone, the counter stays.
  EXPECT_FALSE(exists("shared-counter"));
  EXPECT_EQ(fenced.token(), 43);
}

INSTANTIATE_TEST_SUITE_P(redisson, fenced_interop, ::testing::ValuesIn(fenced_jars()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
