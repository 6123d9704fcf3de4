// SPDX-License-Identifier: Apache-2.0
// relock::permit_expirable_semaphore (client::permit_expirable_semaphore) against the real
// Redisson's RPermitExpirableSemaphore (getPermitExpirableSemaphore, the driver's p* commands),
// once per Redisson version built by tests/interop/redisson/prepare (issue #22). Both keep the
// available count under the name and the permits taken in {name}:timeout, each a member of 16
// raw bytes (shown to users as 32 lowercase hex chars on both sides) scored by its expiry in
// Unix ms, and every script of either side first takes back the permits whose time ran out. So
// a permit either side acquired can be released by the other by its id, a leased permit of
// either side that expires comes back to whoever asks next, and a relock permit without a lease,
// renewed by relock's watchdog, never looks expired to Java.
//
// Redisson's permits without a lease score 922337203685477 (never expire); relock's are scored
// a watchdog lease ahead and renewed. acquiredPermits and getLeaseTime exist in 4.x only (the
// driver answers UnsupportedException on 3.18.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <relock/client.hpp>

#include "interop_env.hpp"
#include "redisson_fixture.hpp"
#include "support/error_of.hpp"
#include "support/permit_ids.hpp"
#include "support/wait.hpp"

namespace permit_semaphore_interop_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

// A waiter woken by a release message gets its permit within this of the release.
constexpr auto by_message = 500ms;
constexpr double by_message_ms = std::chrono::duration<double, std::milli>(by_message).count();

// Redisson's score for a permit without a lease.
constexpr std::int64_t never_expires = 922337203685477;

std::string timeout_key(const std::string& name) { return "{" + name + "}:timeout"; }

// The first of `ids` (commands sent to `j`) to be answered: its index and its reply.
std::pair<std::size_t, nlohmann::json> first_reply(redisson_driver& j,
                                                   const std::vector<std::string>& ids,
                                                   std::chrono::milliseconds timeout) {
  std::pair<std::size_t, nlohmann::json> out{ids.size(), nullptr};
  wait_until(
      [&] {
        for (std::size_t i = 0; i < ids.size(); ++i) {
          try {
            out = {i, j.wait_reply(ids[i], 0ms)};
            return true;
          } catch (const std::runtime_error&) {
          }
        }
        return false;
      },
      timeout);
  if (out.first == ids.size()) throw std::runtime_error("none of the commands was answered");
  return out;
}

class permit_semaphore_interop : public redisson_fixture {
 protected:
  bool is_4x(redisson_driver& j) const { return j.redisson_version().rfind("3.", 0) != 0; }

  std::string stored(const std::string& name) { return raw_.command({"GET", name}).str; }
  // The permit's expiry (Unix ms) in the timeout set, or nullopt when it is not there.
  std::optional<std::int64_t> expiry_of(const std::string& name, const std::string& id) {
    auto r = raw_.command({"ZSCORE", timeout_key(name), raw_bytes(id)});
    if (r.is_nil()) return std::nullopt;
    return static_cast<std::int64_t>(std::stod(r.str));
  }
  std::int64_t taken(const std::string& name) {
    return raw_.command({"ZCARD", timeout_key(name)}).integer;
  }
  // Every key on the server, sorted.
  std::vector<std::string> keys() {
    std::vector<std::string> out;
    for (const auto& e : raw_.command({"KEYS", "*"}).elements) out.push_back(e.str);
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

// relock's leased permit is what Java counts and sees; Java extends its lease and releases it.
TEST_P(permit_semaphore_interop, relocks_leased_permit_is_seen_and_released_by_java) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("p");

  ASSERT_EQ(j.call_ok("a", "ptrysetpermits p 3"), true);
  EXPECT_FALSE(sem.try_set_permits(1));
  const auto before = unix_ms();
  auto permit = sem.try_acquire(0ms, 20s);
  const auto after = unix_ms();
  ASSERT_TRUE(permit);
  const std::string id = permit->detach();  // Java gives it back below
  EXPECT_TRUE(is_permit_id(id)) << id;

  // The member is the id's 16 bytes, scored by its expiry: acquire time + 20 s.
  auto expiry = expiry_of("p", id);
  ASSERT_TRUE(expiry);
  EXPECT_GE(*expiry, before + 20'000);
  EXPECT_LE(*expiry, after + 20'000);
  EXPECT_EQ(taken("p"), 1);
  EXPECT_EQ(stored("p"), "2");

  EXPECT_EQ(j.call_ok("a", "pavailable p"), 2);
  if (is_4x(j)) {
    EXPECT_EQ(j.call_ok("a", "pacquired p"), 1);
    const auto lease = j.call_ok("a", "pleasetime p " + id).get<std::int64_t>();
    EXPECT_GT(lease, 15'000);
    EXPECT_LE(lease, 20'000);
  } else {
    auto r = j.call("a", "pacquired p");
    EXPECT_NE(r.value("error", "").find("UnsupportedException"), std::string::npos) << r.dump();
  }
  EXPECT_EQ(sem.acquired_permits(), 1);

  // Java moves its lease to 60 s; relock's view follows.
  ASSERT_EQ(j.call_ok("a", "pupdatelease p " + id + " 60000"), true);
  expiry = expiry_of("p", id);
  ASSERT_TRUE(expiry);
  EXPECT_GE(*expiry, after + 55'000);

  // Java gives relock's permit back by its id; relock's release then finds nothing.
  ASSERT_EQ(j.call_ok("a", "prelease p " + id), true);
  EXPECT_EQ(sem.available_permits(), 3);
  EXPECT_EQ(taken("p"), 0);
  EXPECT_FALSE(sem.try_release(id));
  EXPECT_EQ(error_of([&] { sem.release(id); }), errc::not_owner);
  EXPECT_EQ(j.call_ok("a", "pavailable p"), 3);
}

// Java's permits (one without a lease, one with) are counted and released by relock by their ids.
TEST_P(permit_semaphore_interop, javas_permits_are_counted_and_released_by_relock) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("jp");

  ASSERT_TRUE(sem.try_set_permits(3));
  EXPECT_EQ(j.call_ok("a", "ptrysetpermits jp 5"), false);
  const auto forever = j.call_ok("a", "pacquire jp").get<std::string>();
  const auto leased = j.call_ok("a", "pacquire jp 30000").get<std::string>();
  EXPECT_TRUE(is_permit_id(forever)) << forever;
  EXPECT_TRUE(is_permit_id(leased)) << leased;
  EXPECT_EQ(expiry_of("jp", forever), never_expires);
  ASSERT_TRUE(expiry_of("jp", leased));
  EXPECT_GT(*expiry_of("jp", leased), unix_ms() + 25'000);

  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(sem.acquired_permits(), 2);

  // relock shortens the Java permit's lease; Java (4.x) reads it back.
  EXPECT_TRUE(sem.update_lease(leased, 10s));
  ASSERT_TRUE(expiry_of("jp", leased));
  EXPECT_LE(*expiry_of("jp", leased), unix_ms() + 10'000);
  if (is_4x(j)) {
    const auto lease = j.call_ok("a", "pleasetime jp " + leased).get<std::int64_t>();
    EXPECT_GT(lease, 5'000);
    EXPECT_LE(lease, 10'000);
  }

  sem.release(forever);
  EXPECT_TRUE(sem.try_release(leased));
  EXPECT_EQ(taken("jp"), 0);
  EXPECT_EQ(j.call_ok("a", "pavailable jp"), 3);
  EXPECT_EQ(j.call_ok("a", "ptryrelease jp " + forever), false);
  auto again = j.call("a", "prelease jp " + leased);
  EXPECT_FALSE(again.value("ok", true)) << again.dump();
  EXPECT_NE(again.value("error", "").find("has already been released"), std::string::npos)
      << again.dump();
  EXPECT_FALSE(sem.try_release(forever));
  // relock's release latches are gone once their work is done: the count is all that is left.
  const std::vector<std::string> count_only{"jp"};
  EXPECT_TRUE(wait_until([&] { return keys() == count_only; }, 5s))
      << ::testing::PrintToString(keys());
}

// set_permits and Redisson 4.x's setPermits both make available + acquired the number given:
// each side's call moves the count the other reads by the difference (3.18.1 has no setPermits).
TEST_P(permit_semaphore_interop, set_permits_counts_the_permits_either_side_holds) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("sp");

  ASSERT_TRUE(sem.try_set_permits(2));
  const auto java_id = j.call_ok("a", "pacquire sp").get<std::string>();
  auto permit = sem.try_acquire(0ms, 60s);
  ASSERT_TRUE(permit);
  const std::string relock_id = permit->detach();  // Java gives it back below
  EXPECT_EQ(stored("sp"), "0");

  sem.set_permits(5);  // 2 held: 3 available
  EXPECT_EQ(j.call_ok("a", "pavailable sp"), 3);
  auto set = j.call("a", "psetpermits sp 3");
  if (!is_4x(j)) {
    EXPECT_NE(set.value("error", "").find("UnsupportedException"), std::string::npos) << set.dump();
    return;
  }
  ASSERT_EQ(set["result"], true) << set.dump();
  EXPECT_EQ(sem.available_permits(), 1);  // 2 held
  EXPECT_EQ(sem.acquired_permits(), 2);
  EXPECT_EQ(j.call_ok("a", "pacquired sp"), 2);
  sem.release(java_id);
  ASSERT_EQ(j.call_ok("a", "prelease sp " + relock_id), true);
  EXPECT_EQ(j.call_ok("a", "pavailable sp"), 3);
}

// A relock permit taken without a lease is scored a watchdog lease ahead and renewed: its score
// keeps moving forward, past the first lease several times over, and Java, whose every script
// takes back expired permits, never gets it. relock's release then gives it back to Java.
TEST_P(permit_semaphore_interop,
       a_relock_permit_without_lease_is_renewed_and_java_cannot_reclaim_it) {
  constexpr auto watchdog = 1500ms;
  auto j = java();
  relock::client client(settings(watchdog));
  auto sem = client.permit_expirable_semaphore("renew");

  ASSERT_EQ(j.call_ok("a", "ptrysetpermits renew 1"), true);
  const auto acquired_at = unix_ms();
  auto permit = sem.acquire();
  const std::string id = permit.id();
  auto first = expiry_of("renew", id);
  ASSERT_TRUE(first);
  EXPECT_GE(*first, acquired_at + watchdog.count());
  EXPECT_LE(*first, unix_ms() + watchdog.count());

  // Watch for three leases: the score stays ahead of the clock and moves forward; Java's
  // tryAcquire and availablePermits (which take back expired permits) find nothing.
  const auto until = acquired_at + 3 * watchdog.count();
  std::int64_t last = *first;
  std::int64_t renewals = 0;
  std::int64_t looks = 0;
  std::int64_t least_ahead = watchdog.count();
  while (unix_ms() < until) {
    EXPECT_EQ(j.call_ok("b", "ptryacquire renew 0"), nullptr);
    EXPECT_EQ(j.call_ok("b", "pavailable renew"), 0);
    const auto now = unix_ms();
    auto score = expiry_of("renew", id);
    ASSERT_TRUE(score) << "the permit was taken back " << now - acquired_at
                       << " ms after it was acquired";
    EXPECT_GT(*score, now);
    least_ahead = std::min(least_ahead, *score - now);
    EXPECT_GE(*score, last);
    if (*score > last) ++renewals;
    last = *score;
    ++looks;
    // Pace the looks: wait for the score to move (or a tenth of a lease), not for a set time.
    wait_until([&] { return expiry_of("renew", id).value_or(0) != last; }, watchdog / 10);
  }
  std::cout << looks << " looks over " << 3 * watchdog.count() << " ms: " << renewals
            << " renewals seen, the score moved " << last - *first << " ms forward; at least "
            << least_ahead << " ms ahead of the clock" << std::endl;
  EXPECT_GE(renewals, 4);
  EXPECT_GT(last, *first + 2 * watchdog.count() - watchdog.count() / 2);
  EXPECT_EQ(stored("renew"), "0");
  EXPECT_EQ(taken("renew"), 1);

  // Released by relock, the permit goes to a Java waiter at once.
  auto waiting = j.send("c", "ptryacquire renew 10000");
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("renew")) >= 1; }, 5s));
  auto released = steady::now();
  permit.release();
  auto r = j.wait_reply(waiting, 5s);
  ASSERT_TRUE(r["result"].is_string()) << r.dump();
  EXPECT_TRUE(is_permit_id(r["result"].get<std::string>()));
  EXPECT_LT(ms_to_end(released, r), by_message_ms);
  EXPECT_FALSE(expiry_of("renew", id));
}

// A relock client that goes away holding a permit without a lease (its watchdog stops): the
// permit's score stops moving, and a Java waiter gets it about when that last renewal runs out.
TEST_P(permit_semaphore_interop, a_permit_of_a_relock_client_gone_comes_back_to_java) {
  constexpr auto watchdog = 1500ms;
  auto j = java();
  ASSERT_EQ(j.call_ok("a", "ptrysetpermits gone 1"), true);
  std::string id;
  {
    relock::client client(settings(watchdog));
    auto sem = client.permit_expirable_semaphore("gone");
    id = sem.acquire().detach();  // kept: the client's end must not give it back
    ASSERT_TRUE(expiry_of("gone", id));
  }
  const auto gone_at = unix_ms();
  const auto last = expiry_of("gone", id);
  ASSERT_TRUE(last) << "the client's end gave the permit back";
  EXPECT_LE(*last, gone_at + watchdog.count());

  auto r = j.call("b", "ptryacquire gone 10000", 15s);
  const auto got_at = unix_ms();
  ASSERT_TRUE(r["result"].is_string()) << r.dump();
  std::cout << "the client gone " << *last - gone_at
            << " ms before its permit's expiry; Java got it " << got_at - *last
            << " ms after that expiry" << std::endl;
  EXPECT_GE(got_at, *last);
  EXPECT_LT(got_at, *last + 1000);
  EXPECT_FALSE(expiry_of("gone", id));
}

// A Java permit with a short lease expires; relock's waiting acquire takes it back about when it
// expires (it looks again at the earliest expiry), and Java's release of it then fails.
TEST_P(permit_semaphore_interop, a_java_permit_with_a_short_lease_expires_and_relock_reclaims_it) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("short");

  ASSERT_EQ(j.call_ok("a", "ptrysetpermits short 1"), true);
  const auto java_id = j.call_ok("a", "pacquire short 1500").get<std::string>();
  const auto expires = expiry_of("short", java_id);
  ASSERT_TRUE(expires);
  EXPECT_EQ(sem.try_acquire(), std::nullopt);  // not expired yet

  on_thread<std::optional<relock::permit>> waiter(
      [&sem](std::stop_token stop) { return sem.try_acquire(10s, std::nullopt, stop); });
  ASSERT_TRUE(waiter.done(10s));
  const auto got_at = unix_ms();
  auto [id, at] = waiter.get();
  ASSERT_TRUE(id);
  EXPECT_TRUE(is_permit_id(id->id()));
  EXPECT_NE(id->id(), java_id);
  std::cout << "relock took the expired Java permit back " << got_at - *expires
            << " ms after its expiry" << std::endl;
  EXPECT_GE(got_at, *expires);
  EXPECT_LT(got_at, *expires + 1000);  // at the expiry, at worst at the next 1 s look

  EXPECT_FALSE(expiry_of("short", java_id));
  EXPECT_TRUE(expiry_of("short", id->id()));
  EXPECT_EQ(j.call_ok("a", "ptryrelease short " + java_id), false);
  EXPECT_EQ(j.call_ok("a", "pavailable short"), 0);
  id->release();
  EXPECT_EQ(j.call_ok("a", "pavailable short"), 1);
}

// A relock permit with a short lease expires; Java takes it back, and relock's release of it
// reports the loss (errc::lock_lost) rather than giving back a permit it no longer held.
TEST_P(permit_semaphore_interop, a_relock_permit_whose_lease_ran_out_is_reclaimed_by_java) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("lapsed");

  ASSERT_TRUE(sem.try_set_permits(1));
  auto permit = sem.try_acquire(0ms, 1000ms);
  ASSERT_TRUE(permit);
  const std::string id = permit->id();
  const auto expires = expiry_of("lapsed", id);
  ASSERT_TRUE(expires);

  // Redisson's waiter sleeps until the earliest expiry the script told it, then tries again.
  auto r = j.call("a", "ptryacquire lapsed 10000", 15s);
  const auto got_at = unix_ms();
  ASSERT_TRUE(r["result"].is_string()) << r.dump();
  const auto java_id = r["result"].get<std::string>();
  std::cout << "Java took the expired relock permit back " << got_at - *expires
            << " ms after its expiry" << std::endl;
  EXPECT_GE(got_at, *expires);
  EXPECT_FALSE(expiry_of("lapsed", id));

  EXPECT_EQ(error_of([&] { permit->release(); }), errc::lock_lost);
  EXPECT_FALSE(*permit);
  EXPECT_EQ(stored("lapsed"), "0");  // the failed release gave nothing back
  EXPECT_FALSE(sem.try_release(id));
  EXPECT_EQ(j.call_ok("a", "prelease lapsed " + java_id), true);
  EXPECT_EQ(sem.available_permits(), 1);
}

// Releases wake the other side's waiters by message: Java's release wakes a relock waiter, and
// relock's release wakes a sync and an async Java waiter.
TEST_P(permit_semaphore_interop, releases_wake_the_other_sides_waiters) {
  auto j = java();
  relock::client client(settings());
  auto sem = client.permit_expirable_semaphore("wake");

  ASSERT_EQ(j.call_ok("a", "ptrysetpermits wake 1"), true);
  const auto java_id = j.call_ok("a", "pacquire wake").get<std::string>();

  on_thread<std::optional<relock::permit>> waiter(
      [&sem](std::stop_token stop) { return sem.try_acquire(10s, 30s, stop); });
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("wake")) >= 1; }, 5s));
  EXPECT_FALSE(waiter.done(100ms));
  auto rel = j.call("a", "prelease wake " + java_id);
  ASSERT_EQ(rel["result"], true) << rel.dump();
  ASSERT_TRUE(waiter.done(5s));
  auto [id, at] = waiter.get();
  ASSERT_TRUE(id);
  const double relock_ms = ms_since_start(rel, at);
  EXPECT_LT(relock_ms, by_message_ms);

  // relock holds the only permit. Its release feeds one of two Java waiters (a sync and an
  // async one), and its add_permits(1) (which publishes 1) the other.
  auto sync_wait = j.send("b", "ptryacquire wake 20000");
  auto async_wait = j.send("c", "pacquireasync wake 20000");
  ASSERT_TRUE(wait_until([&] { return subscribers(semaphore_channel("wake")) >= 1; }, 5s));
  EXPECT_THROW(j.wait_reply(sync_wait, 200ms), std::runtime_error);  // still waiting

  auto released = steady::now();
  id->release();
  auto [which, first] = first_reply(j, {sync_wait, async_wait}, 5s);
  ASSERT_TRUE(first["result"].is_string()) << first.dump();
  const double first_ms = ms_to_end(released, first);
  EXPECT_LT(first_ms, by_message_ms);

  auto added = steady::now();
  sem.add_permits(1);
  auto second = j.wait_reply(which == 0 ? async_wait : sync_wait, 5s);
  ASSERT_TRUE(second["result"].is_string()) << second.dump();
  const double second_ms = ms_to_end(added, second);
  EXPECT_LT(second_ms, by_message_ms);
  EXPECT_NE(first["result"], second["result"]);
  std::cout << "relock woken " << relock_ms << " ms after Java's release; Java's "
            << (which == 0 ? "sync" : "async") << " waiter " << first_ms
            << " ms after relock's release, the other " << second_ms
            << " ms after relock's add_permits" << std::endl;
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(sem.acquired_permits(), 2);
}

INSTANTIATE_TEST_SUITE_P(redisson, permit_semaphore_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });

}  // namespace permit_semaphore_interop_test
