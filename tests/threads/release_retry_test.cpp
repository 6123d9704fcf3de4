// SPDX-License-Identifier: Apache-2.0
// An unlock that Redis did not answer (the server stopped) is finished once Redis answers again,
// while the client lives, instead of leaving the lock held for the rest of its lease.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <system_error>

#include <relock/client.hpp>
#include <relock/lock.hpp>

#include "support/busy_script.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

std::error_code unlock(relock::mutex& lock, relock::owner who) {
  std::promise<std::error_code> done;
  lock.async_unlock(who, [&](std::error_code ec) { done.set_value(ec); });
  return done.get_future().get();
}

// One try, as the given owner: whether it was granted (an error counts as not).
bool try_lock(relock::mutex& lock, relock::owner who) {
  std::promise<bool> done;
  lock.async_try_lock(who, {},
                      [&](std::error_code ec, bool acquired) { done.set_value(!ec && acquired); });
  return done.get_future().get();
}

// A client of `server` whose commands give up after 500 ms: a stopped server fails them fast.
relock::config impatient(const redis_server& server) {
  relock::config settings = settings_for(server);
  settings.command_timeout = 500ms;
  return settings;
}

}  // namespace

TEST(release_retry, an_unanswered_unlock_is_finished_when_the_server_answers_again) {
  redis_server server;
  raw_client direct = raw_client::to(server);
  relock::client client(impatient(server));
  auto lock = client.lock("retried");
  const auto me = relock::owner::unique();
  ASSERT_TRUE(try_lock(lock, me));

  server.pause();
  const auto ec = unlock(lock, me);
  EXPECT_EQ(ec, relock::errc::timeout) << ec.message();
  server.resume();
  const auto resumed = steady::now();
  // Well before the 30 s lease: the unlock's copy sent again is answered.
  EXPECT_TRUE(wait_until(
      [&] {
        return direct.command({"EXISTS", "retried"}).integer == 0;
      },
      5s))
      << "the lock is still held after the server came back";
  EXPECT_LT(steady::now() - resumed, 3s);
  // And the same owner can take it again at once: its next try found nothing left to settle.
  EXPECT_TRUE(try_lock(lock, me));
  EXPECT_FALSE(unlock(lock, me));
}

TEST(release_retry, a_client_destroyed_right_after_a_failed_unlock_still_finishes_it) {
  redis_server server;
  raw_client direct = raw_client::to(server);
  {
    relock::client client(impatient(server));
    auto lock = client.lock("retried-at-exit");
    const auto me = relock::owner::unique();
    ASSERT_TRUE(try_lock(lock, me));
    server.pause();
    EXPECT_EQ(unlock(lock, me), relock::errc::timeout);
    server.resume();
    // The client goes away at once, as `relock run` does after its command: its shutdown lets
    // the last copy be answered.
  }
  EXPECT_EQ(direct.command({"EXISTS", "retried-at-exit"}).integer, 0);
}

// A release refused while a script runs (-BUSY) never ran. It used to be reported and dropped:
// the hold stayed for its lease, and the same owner (a thread locking again) re-entered it
// unknowingly, so its next unlock left the lock held (the fault suite's reused-owner workers
// showed waiters kept out for a whole lease). It goes again until the server takes it.
TEST(release_retry, an_unlock_refused_while_a_script_runs_is_finished_after_it) {
  redis_server server({.extra_config = {"busy-reply-threshold 100"}});
  raw_client direct = raw_client::to(server);
  relock::client client(settings_for(server));
  auto lock = client.lock("busy-release");
  const auto me = relock::owner::unique();
  ASSERT_TRUE(try_lock(lock, me));
  {
    relock::test::busy_script busy(server);
    ASSERT_TRUE(busy.wait_until_busy());
    const auto ec = unlock(lock, me);
    EXPECT_TRUE(ec) << "the unlock was not refused";
    // The same owner locks again while the server is still busy: its try waits for the release.
    std::promise<bool> again;
    relock::lock_options options;
    options.wait = 10s;
    lock.async_try_lock(me, options,
                        [&](std::error_code, bool acquired) { again.set_value(acquired); });
    busy.kill();
    EXPECT_TRUE(again.get_future().get());
  }
  // One hold, not the old one re-entered: one unlock frees it.
  EXPECT_EQ(direct.command({"HVALS", "busy-release"}).elements.size(), 1u);
  EXPECT_EQ(direct.command({"HVALS", "busy-release"}).elements.at(0).str, "1");
  EXPECT_FALSE(unlock(lock, me));
  EXPECT_EQ(direct.command({"EXISTS", "busy-release"}).integer, 0);
}
