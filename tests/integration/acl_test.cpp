// SPDX-License-Identifier: Apache-2.0
// Least privilege: every kind under an ACL user with exactly the rules the README gives (read
// from README.md, so the two cannot drift apart), and what a user without them gets: NOPERM as
// errc::no_permission, with nothing written.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "support/every_kind.hpp"
#include "support/raw_client.hpp"
#include "support/readme_blocks.hpp"
#include "support/redis_server.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

namespace acl_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::test::raw_client;
using relock::test::redis_server;

namespace {

// The README's one-server block.
std::string readme_rules() { return relock::test::readme_acl_rules(0); }

// `rules` given to the user app (password app-pw); the default user keeps every right, for the
// test's own raw client.
redis_server server_with(const std::string& rules) {
  return redis_server({.password = "admin-pw", .extra_config = {"user app on >app-pw " + rules}});
}

relock::config as_app(const redis_server& server) {
  relock::config c;
  c.url = "redis://app:app-pw@127.0.0.1:" + std::to_string(server.port());
  c.watchdog_lease = 3s;
  c.log = [](relock::log_level level, std::string_view text) {
    if (level >= relock::log_level::warning)
      std::fprintf(stderr, "relock: %.*s\n", int(text.size()), text.data());
  };
  return c;
}

std::string digest(raw_client& raw) { return raw.command({"DEBUG", "DIGEST"}).str; }

template <class F>
std::error_code error_of(F&& f, std::string* said = nullptr) {
  try {
    f();
  } catch (const relock::error& e) {
    if (said) *said = e.what();
    return e.code();
  }
  return {};
}

}  // namespace

TEST(acl, the_readmes_rules_are_enough_for_every_kind) {
  const std::string rules = readme_rules();
  ASSERT_NE(rules.find("+evalsha"), std::string::npos) << "README block not found: " << rules;
  auto server = server_with(rules);
  relock::client client(as_app(server)), other(as_app(server));

  auto lock = client.lock("app:lock");
  lock.lock();
  auto waited = std::async(std::launch::async, [&] {
    auto l = other.lock("app:lock");
    const bool got = l.try_lock(10s);
    if (got) l.unlock();
    return got;
  });
  auto raw = raw_client::to(server);
  ASSERT_TRUE(relock::test::wait_until(
      [&] {
        return raw.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{app:lock}"})
                   .elements.at(1)
                   .integer == 1;
      },
      5s));
  lock.unlock();
  EXPECT_TRUE(waited.get());

  relock::test::take_and_give_back_each_kind(
      client, other, [](const char* kind) { return std::string("app:") + kind; });

  auto latch = client.count_down_latch("app:latch");
  EXPECT_TRUE(latch.try_set_count(1));
  latch.count_down();
  EXPECT_TRUE(latch.await(1s));

  auto queue = client.blocking_queue("app:queue");
  EXPECT_TRUE(queue.offer("now"));
  EXPECT_EQ(queue.poll(1s), std::optional<std::string>("now"));
  auto delayed = client.delayed_queue("app:queue");  // its transfer lives as long as it does
  delayed.offer("later", 50ms);
  EXPECT_EQ(queue.poll(5s), std::optional<std::string>("later"));
}

TEST(acl, a_name_outside_the_rules_is_no_permission_and_writes_nothing) {
  auto server = server_with(readme_rules());
  relock::client client(as_app(server));
  auto raw = raw_client::to(server);
  const std::string before = digest(raw);
  EXPECT_EQ(error_of([&] { client.lock("other:lock").try_lock(); }), errc::no_permission);
  EXPECT_EQ(error_of([&] { client.fair_lock("other:fair").try_lock(); }), errc::no_permission);
  EXPECT_EQ(error_of([&] { client.semaphore("other:sem").try_set_permits(1); }),
            errc::no_permission);
  EXPECT_EQ(error_of([&] { client.blocking_queue("other:queue").offer("x"); }),
            errc::no_permission);
  EXPECT_EQ(digest(raw), before);
  try {
    client.lock("other:lock").try_lock();
  } catch (const relock::error& e) {
    EXPECT_NE(std::string(e.what()).find("NOPERM"), std::string::npos) << e.what();
  }
}

TEST(acl, a_command_left_out_is_no_permission_and_writes_nothing) {
  // Everything but ZADD: a fair lock's waiter needs it to take its place in the queue.
  std::string rules = readme_rules();
  const auto at = rules.find(" +zadd");
  ASSERT_NE(at, std::string::npos);
  rules.erase(at, 6);
  auto server = server_with(rules);
  relock::client holder(as_app(server)), waiter(as_app(server));
  auto raw = raw_client::to(server);
  auto fair = holder.fair_lock("app:fair");
  const auto held = error_of([&] { fair.lock(); });
  const std::string before = digest(raw);
  std::string said;
  const auto waited = error_of([&] { waiter.fair_lock("app:fair").try_lock(200ms); }, &said);
  // The waiter's give-up (what a fair waiter's tries may have left) writes a latch of its own,
  // which the sweeper deletes once the give-up is answered: nothing else, and nothing lasting.
  EXPECT_TRUE(relock::test::wait_until([&] { return digest(raw) == before; }, 3s))
      << "the waiter left something behind";
  EXPECT_EQ(waited, errc::no_permission) << said << "; the holder: " << held.message();
  // The server's words: Redis 7.0's "can't run this command", Valkey 9's "no permissions to run".
  EXPECT_TRUE(said.find("can't run this command") != std::string::npos ||
              said.find("no permissions to run the 'zadd' command") != std::string::npos)
      << "said: " << said;
  if (!held) fair.unlock();
}

TEST(acl, a_channel_left_out_is_said_and_the_waiter_still_gets_the_lock) {
  // The block without its channel patterns: every subscription is refused.
  std::string rules = readme_rules();
  const auto at = rules.find(" &");
  ASSERT_NE(at, std::string::npos);
  rules.erase(at);
  auto server = server_with(rules);
  relock::client holder(as_app(server));
  auto told = std::make_shared<std::atomic<bool>>(false);
  auto settings = as_app(server);
  settings.log = [told](relock::log_level level, std::string_view text) {
    if (level == relock::log_level::error &&
        text.find("a subscription was refused") != std::string_view::npos &&
        text.find("NOPERM") != std::string_view::npos) {
      *told = true;
    }
  };
  relock::client waiter(settings);
  auto held = holder.lock("app:unheard");
  held.lock(500ms);  // a lease: nothing publishes its end
  EXPECT_TRUE(waiter.lock("app:unheard").try_lock(5s)) << "the waiter's timer alone";
  EXPECT_TRUE(relock::test::wait_until([&] { return told->load(); }, 3s))
      << "the refused subscription went unsaid";
  waiter.lock("app:unheard").unlock();
}

TEST(acl, tls_and_an_acl_user_combine) {
  static const relock::test::tls_files tls;
  redis_server server({.password = "admin-pw",
                       .extra_config = {"user app on >app-pw " + readme_rules()},
                       .tls_cert_file = tls.server_cert(),
                       .tls_key_file = tls.server_key(),
                       .tls_ca_file = tls.ca()});
  relock::config c;
  c.url = "rediss://app:app-pw@localhost:" + std::to_string(server.tls_port());
  c.tls.ca_file = tls.ca();
  relock::client client(c);
  auto lock = client.lock("app:over-tls");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
  EXPECT_EQ(error_of([&] { client.lock("other:over-tls").try_lock(); }), errc::no_permission);
}

}  // namespace acl_test
