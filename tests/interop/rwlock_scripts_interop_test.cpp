// SPDX-License-Identifier: Apache-2.0
// The read-write lock's scripts (data-layout §4) against the real Redisson's RReadWriteLock, once
// per Redisson version built by tests/interop/redisson/prepare: the scripts are run directly
// through relock's executor (the lock kind on top of them is not part of this file), Redisson
// through the driver.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "interop_env.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "redisson_fixture.hpp"
#include "support/expect_messages.hpp"
#include "support/raw_subscriber.hpp"
#include "support/rwlock_calls.hpp"
#include "support/sync_calls.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;
namespace obj = relock::layout;

namespace {

using rw = relock::test::rwlock_calls;

bool acquired(const result& r) { return !r.ec && r.value.is_nil(); }

std::int64_t integer(const result& r) {
  EXPECT_FALSE(r.ec) << r.value.str;
  EXPECT_TRUE(r.value.is_integer()) << relock::resp::to_string(r.value);
  return r.value.is_integer() ? r.value.integer : -100;
}

class rwlock_scripts_interop : public redisson_fixture {
 protected:
  relock::client client_{settings()};
  relock::exec::executor& ex_ = relock::detail::core_of(client_)->executor();
  // Owners of the scripts' holds, fields as relock writes them.
  const std::string S1 = client_.id() + ":9001";
  const std::string S2 = client_.id() + ":9002";
};

}  // namespace

// Java readers and script readers share, and each side's read release finds the other's
// read-hold timeout keys (so the lock's TTL follows every reader, whoever wrote it).
TEST_P(rwlock_scripts_interop, java_and_script_readers_share) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_EQ(j.call_ok("a", "lock read:doc 20000"), true);
  ASSERT_TRUE(acquired(doc.read(S1, 60'000)));
  ASSERT_EQ(j.call_ok("b", "trylock read:doc 0 30000"), true);
  const auto fa = j.owner_field("a");
  const auto fb = j.owner_field("b");
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {fa, "1"}, {fb, "1"}, {S1, "1"}}));
  // Redisson's timeout keys are named as relock names them.
  EXPECT_TRUE(exists(doc.timeout_key(fa, 1)));
  EXPECT_TRUE(exists(doc.timeout_key(fb, 1)));
  EXPECT_GT(pttl("doc"), 55'000);  // the longest hold: the script's

  // Redisson's releases rebuild the TTL from every owner's keys, the script's included: were
  // it not found, the second release would find no live hold and delete the hash.
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {S1, "1"}}));
  EXPECT_GT(pttl("doc"), 50'000);
  EXPECT_EQ(j.call_ok("c", "islocked read:doc"), true);
  EXPECT_EQ(integer(doc.read_release(S1)), 1);
  EXPECT_FALSE(exists("doc"));

  // The reverse: the script's release finds Java's key.
  rw rev(ex_, "rev");
  ASSERT_TRUE(acquired(rev.read(S1, 30'000)));
  ASSERT_EQ(j.call_ok("a", "trylock read:rev 0 60000"), true);
  ASSERT_TRUE(acquired(rev.read(S2, 5'000)));
  EXPECT_EQ(integer(rev.read_release(S1)), 0);
  EXPECT_EQ(integer(rev.read_release(S2)), 0);
  EXPECT_GT(pttl("rev"), 50'000);  // Java's 60 s hold
  EXPECT_LE(pttl("rev"), 60'000);
  EXPECT_EQ(hash_of("rev"), (fields{{"mode", "read"}, {fa, "1"}}));
  ASSERT_EQ(j.call_ok("a", "unlock read:rev"), true);
  EXPECT_FALSE(exists("rev"));
  EXPECT_EQ(raw_.command({"KEYS", "*rwlock_timeout*"}).elements.size(), 0u);
}

TEST_P(rwlock_scripts_interop, a_java_writer_excludes_script_readers_and_writers_and_the_reverse) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_EQ(j.call_ok("a", "lock write:doc 30000"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {j.owner_field("a") + ":write", "1"}}));
  auto t1 = integer(doc.read(S1, 30'000));
  auto t2 = integer(doc.write(S1, 30'000));
  EXPECT_GT(t1, 20'000);
  EXPECT_LE(t1, 30'000);
  EXPECT_GT(t2, 20'000);
  EXPECT_LE(t2, 30'000);
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  EXPECT_FALSE(exists("doc"));

  ASSERT_TRUE(acquired(doc.write(S1, 30'000)));
  EXPECT_EQ(j.call_ok("b", "trylock read:doc 0"), false);
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0"), false);
  EXPECT_EQ(j.call_ok("b", "islocked write:doc"), true);
  // Java's unlock of a lock it does not hold fails and changes nothing.
  auto denied = j.call("b", "unlock write:doc");
  EXPECT_FALSE(denied.value("ok", true)) << denied.dump();
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {S1 + ":write", "1"}}));
  EXPECT_EQ(integer(doc.write_release(S1, 30'000)), 1);
  EXPECT_FALSE(exists("doc"));

  // Script readers keep a Java writer out too.
  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0"), false);
  EXPECT_EQ(integer(doc.read_release(S1)), 1);
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0 30000"), true);
  ASSERT_EQ(j.call_ok("b", "unlock write:doc"), true);
}

TEST_P(rwlock_scripts_interop, a_downgrade_by_java_is_read_by_the_scripts) {
  auto j = java();
  rw doc(ex_, "doc");
  const auto fa = j.owner_field("a");
  ASSERT_EQ(j.call_ok("a", "lock write:doc 30000"), true);
  ASSERT_EQ(j.call_ok("a", "lock read:doc 30000"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {fa + ":write", "1"}, {fa, "1"}}));
  EXPECT_GT(integer(doc.read(S1, 30'000)), 0);  // a writer's reads are its own

  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {fa, "1"}}));
  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  EXPECT_GT(integer(doc.write(S2, 30'000)), 0);
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {S1, "1"}}));
  EXPECT_EQ(integer(doc.read_release(S1)), 1);
  EXPECT_FALSE(exists("doc"));
}

TEST_P(rwlock_scripts_interop, a_downgrade_by_the_scripts_is_read_by_java) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_TRUE(acquired(doc.write(S1, 30'000)));
  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  EXPECT_EQ(j.call_ok("b", "trylock read:doc 0"), false);
  // readLock().isLocked() on a writer holding its own read: 3.18.1 asks only `mode == read`,
  // 4.7.0 also counts a writer's reads (mode write and more than 2 fields).
  EXPECT_EQ(j.call_ok("b", "islocked read:doc"), j.redisson_version() != "3.18.1");

  EXPECT_EQ(integer(doc.write_release(S1, 30'000)), 1);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {S1, "1"}}));
  EXPECT_EQ(j.call_ok("b", "islocked write:doc"), false);
  EXPECT_EQ(j.call_ok("b", "islocked read:doc"), true);
  ASSERT_EQ(j.call_ok("b", "trylock read:doc 0 30000"), true);
  EXPECT_EQ(j.call_ok("c", "trylock write:doc 0"), false);
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {S1, "1"}}));
  EXPECT_EQ(integer(doc.read_release(S1)), 1);
  EXPECT_FALSE(exists("doc"));
}

// A script write release publishes `1`: every waiting Redisson reader gets in at once.
TEST_P(rwlock_scripts_interop, a_script_write_release_wakes_waiting_java_readers_promptly) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_TRUE(acquired(doc.write(S1, 30'000)));
  auto b = j.send("b", "trylock read:doc 20000 30000");
  auto c = j.send("c", "trylock read:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers(doc.channel()) >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(b, 300ms), std::runtime_error);  // still waiting
  auto released = steady::now();
  ASSERT_EQ(integer(doc.write_release(S1, 30'000)), 1);
  for (const auto& id : {b, c}) {
    auto r = j.wait_reply(id, 5s);
    EXPECT_EQ(r["result"], true) << r.dump();
    EXPECT_LT(ns_after(released, r), 1'000'000'000) << r.dump();
  }
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  ASSERT_EQ(j.call_ok("c", "unlock read:doc"), true);
}

// A downgrade by the scripts also publishes `1` (Redisson's own downgrade stays silent, so its
// waiting readers would sit out the writer's TTL): a waiting Java reader gets in at once.
TEST_P(rwlock_scripts_interop, a_script_downgrade_lets_a_waiting_java_reader_in_promptly) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_TRUE(acquired(doc.write(S1, 30'000)));
  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  auto b = j.send("b", "trylock read:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers(doc.channel()) >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(b, 300ms), std::runtime_error);
  auto released = steady::now();
  ASSERT_EQ(integer(doc.write_release(S1, 30'000)), 1);
  auto r = j.wait_reply(b, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 1'000'000'000) << r.dump();
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  EXPECT_EQ(integer(doc.read_release(S1)), 1);
}

// A script read release and a script force release (messages `0` and `1`) wake a waiting
// Redisson writer.
TEST_P(rwlock_scripts_interop, script_read_and_force_releases_wake_a_waiting_java_writer) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  auto a = j.send("a", "trylock write:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers(doc.channel()) >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(a, 300ms), std::runtime_error);
  auto released = steady::now();
  ASSERT_EQ(integer(doc.read_release(S1)), 1);
  auto r = j.wait_reply(a, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 1'000'000'000) << r.dump();
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);

  ASSERT_TRUE(acquired(doc.read(S1, 30'000)));
  ASSERT_TRUE(acquired(doc.read(S2, 30'000)));
  auto second = j.send("a", "trylock write:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers(doc.channel()) >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(second, 300ms), std::runtime_error);
  auto forced = steady::now();
  ASSERT_EQ(integer(doc.force()), 1);
  auto r2 = j.wait_reply(second, 5s);
  EXPECT_EQ(r2["result"], true) << r2.dump();
  EXPECT_LT(ns_after(forced, r2), 1'000'000'000) << r2.dump();
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  EXPECT_EQ(raw_.command({"KEYS", "*rwlock_timeout*"}).elements.size(), 0u);
}

// What Redisson publishes on `redisson_rwlock:{name}`: `1` for a write release (relock wakes
// every waiter), `0` for a read release (one waiter); nothing for its own downgrade.
TEST_P(rwlock_scripts_interop, java_releases_are_heard_with_the_payloads_relock_expects) {
  auto j = java();
  rw doc(ex_, "doc");
  raw_subscriber sub(server_, doc.channel());
  ASSERT_EQ(j.call_ok("a", "lock write:doc 30000"), true);
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  relock::test::expect_messages(raw_, sub, doc.channel(), {"1"});
  ASSERT_EQ(j.call_ok("a", "lock read:doc 30000"), true);
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  relock::test::expect_messages(raw_, sub, doc.channel(), {"0"});

  ASSERT_EQ(j.call_ok("a", "lock write:doc 30000"), true);
  ASSERT_EQ(j.call_ok("a", "lock read:doc 30000"), true);
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  relock::test::expect_messages(raw_, sub, doc.channel(), {});  // Redisson's downgrade is silent
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  relock::test::expect_messages(raw_, sub, doc.channel(), {"0"});
  EXPECT_FALSE(exists("doc"));
}

// The script renewal renews only its own owner: Redisson's hash and timeout keys keep their TTLs
// and Redisson goes on working with them.
TEST_P(rwlock_scripts_interop, the_script_renewal_leaves_redissons_data_intact) {
  auto j = java();
  rw doc(ex_, "doc");
  ASSERT_EQ(j.call_ok("b", "lock read:doc 60000"), true);
  const auto fb = j.owner_field("b");
  ASSERT_TRUE(acquired(doc.read(S1, 1'000)));
  ASSERT_TRUE(acquired(doc.read(S1, 1'000)));
  auto java_key = pttl(doc.timeout_key(fb, 1));

  auto r = doc.renew_read(S1, 2, 5'000);
  ASSERT_FALSE(r.ec) << r.value.str;
  EXPECT_EQ(r.value.elements.at(0).integer, 1);
  EXPECT_GT(pttl(doc.timeout_key(S1, 1)), 4'000);
  EXPECT_GT(pttl(doc.timeout_key(S1, 2)), 4'000);
  EXPECT_LE(pttl(doc.timeout_key(fb, 1)), java_key);  // neither renewed nor cut short
  EXPECT_GT(pttl(doc.timeout_key(fb, 1)), java_key - 2'000);
  EXPECT_GT(pttl("doc"), 55'000);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {fb, "1"}, {S1, "2"}}));

  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {S1, "2"}}));
  EXPECT_LE(pttl("doc"), 5'000);  // Redisson's release found the renewed keys
  EXPECT_GT(pttl("doc"), 3'000);
  EXPECT_EQ(integer(doc.read_release(S1)), 0);
  EXPECT_EQ(integer(doc.read_release(S1)), 1);

  // On a Java writer's lock, a renewal for an owner holding nothing there touches nothing.
  rw w(ex_, "w");
  ASSERT_EQ(j.call_ok("a", "lock write:w 30000"), true);
  auto dump = raw_.command({"DUMP", "w"}).str;
  auto ttl = pttl("w");
  EXPECT_EQ(w.renew_write(S1, 60'000).value.elements.at(0).integer, 0);
  EXPECT_EQ(w.renew_read(S1, 1, 60'000).value.elements.at(0).integer, 0);
  EXPECT_EQ(raw_.command({"DUMP", "w"}).str, dump);
  EXPECT_LE(pttl("w"), ttl);
  ASSERT_EQ(j.call_ok("a", "unlock write:w"), true);
}

// Redisson's read lock and relock's scripts on a name that holds a plain RLock (a hash without
// `mode`): Redisson treats it as free and adds itself to it; the scripts refuse it (WRONGTYPE)
// and change nothing. If the Redisson half fails, Redisson has changed: update data-layout §4.
TEST_P(rwlock_scripts_interop,
       a_plain_lock_hash_is_refused_by_the_scripts_where_redisson_joins_it) {
  auto j = java();
  rw plain(ex_, "plain");
  ASSERT_EQ(j.call_ok("a", "lock plain 30000"), true);
  const auto fa = j.owner_field("a");
  auto dump = raw_.command({"DUMP", "plain"}).str;
  auto r = plain.read(S1, 30'000);
  EXPECT_EQ(r.ec, errc::wrong_type) << relock::resp::to_string(r.value);
  auto w = plain.write(S1, 30'000);
  EXPECT_EQ(w.ec, errc::wrong_type) << relock::resp::to_string(w.value);
  EXPECT_EQ(raw_.command({"DUMP", "plain"}).str, dump);
  EXPECT_FALSE(exists(plain.timeout_key(S1, 1)));

  // Observed in 3.18.1 and 4.7.0: the read lock takes the plain lock's hash as free.
  EXPECT_EQ(j.call_ok("b", "trylock read:plain 0 30000"), true);
  EXPECT_EQ(hash_of("plain"), (fields{{fa, "1"}, {"mode", "read"}, {j.owner_field("b"), "1"}}));
}

INSTANTIATE_TEST_SUITE_P(redisson, rwlock_scripts_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
