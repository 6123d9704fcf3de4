// SPDX-License-Identifier: Apache-2.0
// client::inspect: what a name holds, recognised from the data alone, relock's own holds and
// data written by hand exactly as Redisson writes it (data-layout §2-§5, §7).
#include <gtest/gtest.h>

#include <future>

#include <asio/use_future.hpp>

#include "support/lock_env.hpp"
#include "support/server_kind.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using relock::hold_side;
using relock::object_kind;

namespace {

// A Redisson client id: the first half of its owner fields.
const std::string java = "6c1bd6a4-93a1-4bfe-9a0e-2b54f1c0e8a1";

class inspect : public ::testing::Test {
 protected:
  redis_server server_;
  relock::client client_{settings_for(server_)};
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace

TEST_F(inspect, a_free_name_is_none) {
  const auto info = client_.inspect("free");
  EXPECT_EQ(info.name, "free");
  EXPECT_EQ(info.key, "free");
  EXPECT_EQ(info.kind, object_kind::none);
  EXPECT_EQ(info.redis_type, "none");
  EXPECT_FALSE(info.locked());
  EXPECT_FALSE(info.remaining_lease);
  EXPECT_TRUE(info.waiters.empty());
  EXPECT_FALSE(info.fencing_token);
  EXPECT_FALSE(info.value);
}

TEST_F(inspect, names_the_server_and_its_version_as_the_server_says) {
  // Valkey also reports a redis_version (the Redis it is compatible with): its own name wins.
  const std::string expected = test_server_kind() == server_kind::valkey ? "valkey " : "redis ";
  const auto info = client_.inspect("free");
  ASSERT_EQ(info.server.rfind(expected, 0), 0u) << info.server;
  const std::string version = info.server.substr(expected.size());
  EXPECT_NE(raw_.command({"INFO", "server"}).str.find("_version:" + version), std::string::npos)
      << version;
}

TEST_F(inspect, a_relock_hold_shows_its_owner_holds_and_lease) {
  auto lk = client_.lock("held");
  lk.lock(20s);
  lk.lock(20s);
  const auto info = client_.inspect("held");
  EXPECT_EQ(info.kind, object_kind::lock);
  EXPECT_EQ(info.redis_type, "hash");
  ASSERT_EQ(info.holders.size(), 1u);
  EXPECT_EQ(info.holders[0].owner, lk.owner_field(relock::owner::current_thread()));
  EXPECT_EQ(info.holders[0].holds, 2);
  EXPECT_EQ(info.holders[0].side, hold_side::exclusive);
  EXPECT_FALSE(info.mode);
  ASSERT_TRUE(info.remaining_lease);
  EXPECT_GT(*info.remaining_lease, 15s);
  EXPECT_LE(*info.remaining_lease, 20s);
  lk.unlock();
  lk.unlock();
  EXPECT_EQ(client_.inspect("held").kind, object_kind::none);
}

TEST_F(inspect, a_hold_without_expiry_has_an_unbounded_lease) {
  raw_.command({"HSET", "forever", java + ":1", "1"});
  const auto info = client_.inspect("forever");
  EXPECT_EQ(info.kind, object_kind::lock);
  EXPECT_EQ(info.remaining_lease, std::chrono::milliseconds::max());
}

TEST_F(inspect, redissons_read_write_lock_in_both_modes) {
  raw_.command({"HSET", "rw", "mode", "read", java + ":1", "2"});
  raw_.command({"PEXPIRE", "rw", "30000"});
  auto info = client_.inspect("rw");
  EXPECT_EQ(info.kind, object_kind::read_write_lock);
  EXPECT_EQ(info.mode, "read");
  ASSERT_EQ(info.holders.size(), 1u);
  EXPECT_EQ(info.holders[0].owner, java + ":1");
  EXPECT_EQ(info.holders[0].holds, 2);
  EXPECT_EQ(info.holders[0].side, hold_side::read);
  EXPECT_TRUE(info.remaining_lease);

  raw_.command({"DEL", "rw"});
  raw_.command({"HSET", "rw", "mode", "write", java + ":7:write", "1"});
  info = client_.inspect("rw");
  EXPECT_EQ(info.kind, object_kind::read_write_lock);
  EXPECT_EQ(info.mode, "write");
  ASSERT_EQ(info.holders.size(), 1u);
  EXPECT_EQ(info.holders[0].owner, java + ":7");  // the ":write" suffix taken off
  EXPECT_EQ(info.holders[0].side, hold_side::write);
}

TEST_F(inspect, redissons_fair_lock_lists_its_queue_head_first_with_deadlines) {
  raw_.command({"HSET", "fair", java + ":1", "1"});
  raw_.command({"RPUSH", "redisson_lock_queue:{fair}", java + ":2", java + ":3", java + ":4"});
  // The third waiter has no timeout entry (yet): its deadline is unknown.
  raw_.command({"ZADD", "redisson_lock_timeout:{fair}", "1700000000000", java + ":2",
                "1700000005000", java + ":3"});
  const auto info = client_.inspect("fair");
  EXPECT_EQ(info.kind, object_kind::fair_lock);
  ASSERT_EQ(info.holders.size(), 1u);
  ASSERT_EQ(info.waiters.size(), 3u);
  EXPECT_EQ(info.waiters[0].owner, java + ":2");
  EXPECT_EQ(info.waiters[0].gives_up_at_ms, 1700000000000);
  EXPECT_EQ(info.waiters[1].owner, java + ":3");
  EXPECT_EQ(info.waiters[1].gives_up_at_ms, 1700000005000);
  EXPECT_EQ(info.waiters[2].owner, java + ":4");
  EXPECT_FALSE(info.waiters[2].gives_up_at_ms);

  // Free, with someone still queued: a fair lock all the same.
  raw_.command({"DEL", "fair"});
  const auto queued = client_.inspect("fair");
  EXPECT_EQ(queued.kind, object_kind::fair_lock);
  EXPECT_TRUE(queued.holders.empty());
  EXPECT_FALSE(queued.remaining_lease);
  EXPECT_EQ(queued.waiters.size(), 3u);
}

TEST_F(inspect, redissons_fenced_lock_shows_its_last_token) {
  raw_.command({"HSET", "fenced", java + ":1", "1"});
  raw_.command({"SET", "redisson_lock_token:{fenced}", "17"});
  const auto info = client_.inspect("fenced");
  EXPECT_EQ(info.kind, object_kind::fenced_lock);
  EXPECT_EQ(info.fencing_token, 17);
  EXPECT_EQ(info.holders.size(), 1u);

  // The token outlives every hold: a free fenced lock still says what it is.
  raw_.command({"DEL", "fenced"});
  const auto free_fenced = client_.inspect("fenced");
  EXPECT_EQ(free_fenced.kind, object_kind::fenced_lock);
  EXPECT_EQ(free_fenced.redis_type, "none");
  EXPECT_EQ(free_fenced.fencing_token, 17);
  EXPECT_TRUE(free_fenced.holders.empty());
}

TEST_F(inspect, a_string_holding_an_integer_is_a_counter) {
  raw_.command({"SET", "permits", "12"});
  const auto info = client_.inspect("permits");
  EXPECT_EQ(info.kind, object_kind::counter);
  EXPECT_EQ(info.redis_type, "string");
  EXPECT_EQ(info.value, 12);
  EXPECT_FALSE(info.locked());
  EXPECT_EQ(info.remaining_lease, std::chrono::milliseconds::max());
}

TEST_F(inspect, anything_else_is_unknown_with_its_redis_type) {
  raw_.command({"SET", "text", "abc"});
  raw_.command({"RPUSH", "list", "a", "b"});
  raw_.command({"HSET", "person", "name", "bob"});
  raw_.command({"HSET", "odd-mode", "mode", "sideways", java + ":1", "1"});
  raw_.command({"SET", "big", std::string(100, '7')});  // digits, but no 64-bit integer
  for (const auto& [name, type] :
       std::vector<std::pair<std::string, std::string>>{{"text", "string"},
                                                        {"list", "list"},
                                                        {"person", "hash"},
                                                        {"odd-mode", "hash"},
                                                        {"big", "string"}}) {
    const auto info = client_.inspect(name);
    EXPECT_EQ(info.kind, object_kind::unknown) << name;
    EXPECT_EQ(info.redis_type, type) << name;
    EXPECT_TRUE(info.holders.empty()) << name;
    EXPECT_FALSE(info.value) << name;
  }
  // A lock's hash, but its token key holds no number: not a lock family we know either.
  raw_.command({"HSET", "spoiled", java + ":1", "1"});
  raw_.command({"SET", "redisson_lock_token:{spoiled}", "abc"});
  EXPECT_EQ(client_.inspect("spoiled").kind, object_kind::unknown);
  // And one whose queue key is of another type: read without failing, then refused.
  raw_.command({"SET", "redisson_lock_queue:{queue-typo}", "x"});
  EXPECT_EQ(client_.inspect("queue-typo").kind, object_kind::unknown);
}

TEST_F(inspect, inspecting_changes_nothing) {
  raw_.command({"HSET", "kept", java + ":1", "1"});
  raw_.command({"PEXPIRE", "kept", "60000"});
  raw_.command({"SET", "redisson_lock_token:{kept}", "5"});
  client_.inspect("kept");
  EXPECT_EQ(raw_.command({"HGET", "kept", java + ":1"}).str, "1");
  EXPECT_GT(raw_.command({"PTTL", "kept"}).integer, 50'000);
  EXPECT_EQ(raw_.command({"GET", "redisson_lock_token:{kept}"}).str, "5");
  EXPECT_EQ(raw_.command({"DBSIZE"}).integer, 2);
}

TEST_F(inspect, async_inspect_with_a_future) {
  raw_.command({"SET", "count", "-3"});
  auto info = client_.async_inspect("count", asio::use_future).get();
  EXPECT_EQ(info.kind, object_kind::counter);
  EXPECT_EQ(info.value, -3);
}

TEST_F(inspect, a_bad_name_is_refused_before_any_io) {
  try {
    client_.inspect("");
    FAIL() << "an empty name was inspected";
  } catch (const relock::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
  }
  // A callback rather than use_future: an exception carried across threads by a future trips
  // ThreadSanitizer's blind spot for libstdc++'s exception_ptr reference count.
  std::promise<std::error_code> refused;
  client_.async_inspect(std::string(70'000, 'x'),
                        [&](std::error_code ec, relock::lock_info) { refused.set_value(ec); });
  EXPECT_EQ(refused.get_future().get(), errc::invalid_argument);
}

TEST_F(inspect, reads_the_key_after_the_name_mapper) {
  auto settings = settings_for(server_);
  settings.name_mapper = [](std::string_view name) { return "app:" + std::string(name); };
  relock::client mapped(settings);
  raw_.command({"HSET", "app:job", java + ":1", "3"});
  raw_.command({"SET", "redisson_lock_token:{app:job}", "9"});
  const auto info = mapped.inspect("job");
  EXPECT_EQ(info.name, "job");
  EXPECT_EQ(info.key, "app:job");
  EXPECT_EQ(info.kind, object_kind::fenced_lock);
  EXPECT_EQ(info.fencing_token, 9);
  ASSERT_EQ(info.holders.size(), 1u);
  EXPECT_EQ(info.holders[0].holds, 3);
}

TEST(inspect_words, kinds_and_sides_read_as_documented) {
  EXPECT_STREQ(relock::to_string(object_kind::none), "none");
  EXPECT_STREQ(relock::to_string(object_kind::lock), "lock");
  EXPECT_STREQ(relock::to_string(object_kind::read_write_lock), "read-write");
  EXPECT_STREQ(relock::to_string(object_kind::fair_lock), "fair");
  EXPECT_STREQ(relock::to_string(object_kind::fenced_lock), "fenced");
  EXPECT_STREQ(relock::to_string(object_kind::counter), "counter");
  EXPECT_STREQ(relock::to_string(object_kind::unknown), "unknown");
  EXPECT_STREQ(relock::to_string(hold_side::exclusive), "exclusive");
  EXPECT_STREQ(relock::to_string(hold_side::read), "read");
  EXPECT_STREQ(relock::to_string(hold_side::write), "write");
}
