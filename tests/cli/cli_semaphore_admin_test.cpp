// SPDX-License-Identifier: Apache-2.0
// `relock semaphore release|set|add`: a permit-expirable semaphore's administration without
// redis-cli; and totals that stay in a Java int's range, for Redisson readers of the same data
// (issue 31). The real binary, real Redis; the plain semaphore's release through the library.
#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"
#include "support/permit_ids.hpp"
#include "support/unlock_latches.hpp"

namespace cli_semaphore_admin_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string digest(raw_client& raw) { return raw.command({"DEBUG", "DIGEST"}).str; }

}  // namespace

TEST_F(cli, semaphore_release_gives_a_stuck_permit_back_by_its_id) {
  relock::client holder(settings_for(server_));
  auto pool = holder.permit_expirable_semaphore("pool");
  ASSERT_TRUE(pool.try_set_permits(2));
  const auto id = pool.acquire(60s).detach();  // a holder that will never give it back
  ASSERT_TRUE(is_permit_id(id));
  EXPECT_EQ(raw_.command({"GET", "pool"}).str, "1");

  auto r = run({"semaphore", "release", "pool", id});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "pool: permit " + id + " given back")) << r.out;
  EXPECT_EQ(raw_.command({"GET", "pool"}).str, "2");
  EXPECT_EQ(raw_.command({"ZCARD", "{pool}:timeout"}).integer, 0);

  auto again = run({"semaphore", "release", "pool", id});
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(lines(again.err), 1u) << again.err;
  EXPECT_TRUE(has(again.err, "no permit " + id)) << again.err;
  EXPECT_EQ(raw_.command({"GET", "pool"}).str, "2");
  EXPECT_EQ(run({"semaphore", "release", "pool", "not-an-id"}).code, 2);
}

TEST_F(cli, semaphore_set_and_add_change_the_permits) {
  relock::client holder(settings_for(server_));
  auto pool = holder.permit_expirable_semaphore("pool");
  ASSERT_TRUE(pool.try_set_permits(2));
  (void)pool.acquire(60s).detach();  // taken for good: the holder never gives it back
  auto set = run({"semaphore", "set", "pool", "5"});
  EXPECT_EQ(set.code, 0) << set.err;
  EXPECT_EQ(set.out, "pool: 4 available, 1 taken\n");  // 5 in all, the taken one included
  auto add = run({"semaphore", "add", "pool", "3"});
  EXPECT_EQ(add.code, 0) << add.err;
  EXPECT_EQ(add.out, "pool: 7 available, 1 taken\n");
  EXPECT_EQ(run({"semaphore", "set", "fresh", "3"}).code, 0);  // made when absent
  EXPECT_EQ(raw_.command({"GET", "fresh"}).str, "3");

  raw_.command({"HSET", "locked", "a:1", "1"});
  const auto before = digest(raw_);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"semaphore", "set", "locked", "3"},
        std::vector<std::string>{"semaphore", "add", "pool", "0x10"},
        std::vector<std::string>{"semaphore", "set", "pool", "-1"},
        std::vector<std::string>{"semaphore", "set", "pool", "2147483648"},
        std::vector<std::string>{"semaphore", "add", "pool", "0"},
        std::vector<std::string>{"semaphore", "release", "locked", "0123"}}) {
    SCOPED_TRACE(args[1] + " " + args[2] + " " + args[3]);
    auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
  EXPECT_EQ(digest(raw_), before);
}

// Redisson reads a semaphore's count as a Java int: 2147483647 twice would leave 4294967294,
// which no Java reader of the same data can hold. The second is refused, nothing changed.
TEST_F(cli, semaphore_add_past_a_java_int_is_refused_changing_nothing) {
  EXPECT_EQ(run({"semaphore", "add", "big", "2147483647"}).code, 0);
  const auto before = digest(raw_);
  auto r = run({"semaphore", "add", "big", "2147483647"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "would make 4294967294 in all, outside a Java int")) << r.err;
  EXPECT_FALSE(has(r.err, "user_script")) << r.err;
  EXPECT_EQ(digest(raw_), before);
  EXPECT_EQ(raw_.command({"GET", "big"}).str, "2147483647");

  // Taken permits count: 1 available and 1 taken is a total of 2, so 2147483646 more is one
  // too many.
  relock::client holder(settings_for(server_));
  auto pool = holder.permit_expirable_semaphore("pool");
  ASSERT_TRUE(pool.try_set_permits(2));
  (void)pool.acquire(60s).detach();  // taken for good: the holder never gives it back
  const auto held = digest(raw_);
  EXPECT_EQ(run({"semaphore", "add", "pool", "2147483646"}).code, 2);
  EXPECT_EQ(digest(raw_), held);
  EXPECT_EQ(run({"semaphore", "add", "pool", "2147483645"}).code, 0);
}

TEST_F(cli, a_plain_semaphore_release_past_a_java_int_is_refused_changing_nothing) {
  relock::client c(settings_for(server_));
  auto s = c.semaphore("sem");
  s.release(2147483647);
  EXPECT_EQ(s.available_permits(), 2147483647);
  // The release's latch waits up to unlock_latch_sweep_delay for its DEL: the data settles first.
  ASSERT_TRUE(wait_until([&] { return unlock_latches(raw_) == 0; }, 5s));
  const auto before = digest(raw_);
  try {
    s.release(2147483647);
    ADD_FAILURE() << "a release past 2147483647 went through";
  } catch (const relock::error& e) {
    EXPECT_TRUE(has(e.what(), "past 2147483647")) << e.what();
    EXPECT_TRUE(has(e.what(), "nothing was changed")) << e.what();
  }
  EXPECT_EQ(digest(raw_), before);
  EXPECT_EQ(s.available_permits(), 2147483647);
  // Up to it is fine: one permit taken and given back.
  ASSERT_TRUE(s.try_acquire(1));
  s.release(1);
  EXPECT_EQ(s.available_permits(), 2147483647);
}

}  // namespace cli_semaphore_admin_test
