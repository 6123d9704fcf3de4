// SPDX-License-Identifier: Apache-2.0
// relock::read_write_lock through the public API against the real Redisson's RReadWriteLock, once
// per Redisson version built by tests/interop/redisson/prepare: sharing and exclusion both ways,
// downgrades, wake-ups on a write release, both watchdogs on read holds, and a Redisson reader
// killed with SIGKILL. (rwlock_scripts_interop_test.cpp checks the scripts' data underneath.)
//
// relock owners other than the test thread are explicit (relock::owner::unique()) and use the
// async API; Java owners are the driver's labels ("a", "b"...), one Java thread each.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
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
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

// try_lock without waiting, by `who`.
bool try_now_as(relock::mutex& side, relock::owner who) {
  return side.async_try_lock(who, relock::lock_options{}, asio::use_future).get();
}

class rwlock_interop : public redisson_fixture {
 protected:
  std::size_t timeout_keys() { return raw_.command({"KEYS", "*rwlock_timeout*"}).elements.size(); }
  // The read-hold timeout key of `field`'s n-th read hold on `name` (data-layout §4).
  static std::string timeout_key(const std::string& name, const std::string& field, int n = 1) {
    return "{" + name + "}:" + field + ":rwlock_timeout:" + std::to_string(n);
  }
};

}  // namespace

// Java and C++ readers hold at once; writers of both languages stay out until the last reader of
// either language has left.
TEST_P(rwlock_interop, java_and_cpp_readers_share) {
  auto j = java();
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto other = relock::owner::unique();
  const auto me = rw.read_lock().owner_field(relock::owner::current_thread());
  const auto fa = j.owner_field("a");

  ASSERT_EQ(j.call_ok("a", "lock read:doc"), true);
  ASSERT_TRUE(rw.read_lock().try_lock());
  ASSERT_TRUE(try_now_as(rw.read_lock(), other));
  ASSERT_EQ(j.call_ok("b", "trylock read:doc 0 30000"), true);
  const auto fb = j.owner_field("b");
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"},
                                    {fa, "1"},
                                    {fb, "1"},
                                    {me, "1"},
                                    {rw.read_lock().owner_field(other), "1"}}));
  // Each side sees the other's holds.
  EXPECT_TRUE(rw.read_lock().is_held_by(fa));
  EXPECT_EQ(rw.read_lock().hold_count(fb), 1);
  EXPECT_EQ(j.call_ok("c", "islocked read:doc"), true);
  EXPECT_EQ(j.call_ok("a", "isheld read:doc"), true);
  EXPECT_EQ(j.call_ok("c", "isheld read:doc"), false);

  // Writers of both languages are refused while readers of both hold.
  EXPECT_EQ(j.call_ok("c", "trylock write:doc 0"), false);
  EXPECT_FALSE(try_now_as(rw.write_lock(), relock::owner::unique()));

  // Java's readers leave: C++ readers still hold, writers still stay out.
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  EXPECT_EQ(j.call_ok("c", "trylock write:doc 0"), false);
  EXPECT_EQ(j.call_ok("c", "islocked read:doc"), true);
  unlock_as(rw.read_lock(), other);
  EXPECT_EQ(j.call_ok("c", "trylock write:doc 0"), false);
  EXPECT_GT(pttl("doc"), 20'000);  // the C++ reader's 30 s hold, found by Java's releases
  rw.read_lock().unlock();
  EXPECT_FALSE(exists("doc"));
  EXPECT_EQ(timeout_keys(), 0u);

  // The reverse order: C++ readers leave first, the Java reader keeps a C++ writer out.
  rw.read_lock().lock();
  ASSERT_EQ(j.call_ok("a", "trylock read:doc 0"), true);
  rw.read_lock().unlock();
  EXPECT_TRUE(exists("doc"));
  EXPECT_FALSE(rw.write_lock().try_lock());
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  EXPECT_FALSE(exists("doc"));
  ASSERT_TRUE(rw.write_lock().try_lock());
  rw.write_lock().unlock();
  EXPECT_EQ(timeout_keys(), 0u);
}

TEST_P(rwlock_interop, a_java_writer_excludes_cpp_readers_and_writers_and_the_reverse) {
  auto j = java();
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto fa = j.owner_field("a");

  ASSERT_EQ(j.call_ok("a", "lock write:doc"), true);
  EXPECT_FALSE(rw.read_lock().try_lock());
  EXPECT_FALSE(rw.write_lock().try_lock());
  auto started = steady::now();
  EXPECT_FALSE(rw.read_lock().try_lock(300ms));
  EXPECT_FALSE(rw.write_lock().try_lock(300ms));
  EXPECT_GE(steady::now() - started, 600ms);
  EXPECT_TRUE(rw.write_lock().is_locked());
  EXPECT_TRUE(rw.write_lock().is_held_by(fa + ":write"));
  EXPECT_EQ(rw.write_lock().hold_count(fa + ":write"), 1);
  auto left = rw.write_lock().remaining_lease();
  ASSERT_TRUE(left);
  EXPECT_GT(*left, 20s);  // Redisson's watchdog lease
  // relock's unlock of a hold it does not have fails and changes nothing.
  std::error_code ec;
  rw.write_lock().unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  rw.read_lock().unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {fa + ":write", "1"}}));
  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  EXPECT_FALSE(exists("doc"));

  // The reverse: a C++ writer keeps Java readers and writers out.
  rw.write_lock().lock();
  const auto me = rw.write_lock().owner_field(relock::owner::current_thread());
  EXPECT_EQ(j.call_ok("b", "trylock read:doc 0"), false);
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0"), false);
  auto waited = j.call("b", "trylock read:doc 300");
  EXPECT_EQ(waited["result"], false) << waited.dump();
  EXPECT_GE(took_ns(waited), 290'000'000);
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 300"), false);
  EXPECT_EQ(j.call_ok("b", "islocked write:doc"), true);
  EXPECT_EQ(j.call_ok("b", "isheld write:doc"), false);
  for (const char* side : {"unlock write:doc", "unlock read:doc"}) {
    auto denied = j.call("b", side);
    EXPECT_FALSE(denied.value("ok", true)) << denied.dump();
    EXPECT_NE(denied.value("error", "").find("IllegalMonitorStateException"), std::string::npos)
        << denied.dump();
  }
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {me, "1"}}));
  rw.write_lock().unlock();
  EXPECT_FALSE(exists("doc"));
  ASSERT_EQ(j.call_ok("b", "trylock write:doc 0"), true);
  ASSERT_EQ(j.call_ok("b", "unlock write:doc"), true);

  // And C++ readers keep a Java writer out.
  rw.read_lock().lock();
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 300"), false);
  rw.read_lock().unlock();
  ASSERT_EQ(j.call_ok("b", "trylock write:doc 0"), true);
  ASSERT_EQ(j.call_ok("b", "unlock write:doc"), true);
  EXPECT_FALSE(exists("doc"));
}

// Java writes, reads (write then read is allowed), then lets the write go: the lock is a shared
// read lock again, and a C++ reader gets in.
TEST_P(rwlock_interop, a_java_downgrade_lets_cpp_readers_in) {
  auto j = java();
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto fa = j.owner_field("a");
  ASSERT_EQ(j.call_ok("a", "lock write:doc"), true);
  ASSERT_EQ(j.call_ok("a", "lock read:doc"), true);
  EXPECT_FALSE(rw.read_lock().try_lock());  // a writer's reads are its own

  ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {fa, "1"}}));
  ASSERT_TRUE(rw.read_lock().try_lock());
  EXPECT_FALSE(try_now_as(rw.write_lock(), relock::owner::unique()));
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0"), false);
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  EXPECT_TRUE(rw.read_lock().is_held_by_current_thread());
  EXPECT_EQ(j.call_ok("b", "trylock write:doc 0"), false);
  rw.read_lock().unlock();
  EXPECT_FALSE(exists("doc"));
  EXPECT_EQ(timeout_keys(), 0u);
}

// C++ the same: a Java reader waiting behind the C++ writer gets in at the downgrade, at once
// (relock's downgrade publishes), and a fresh Java reader shares with the C++ one.
TEST_P(rwlock_interop, a_cpp_downgrade_lets_java_readers_in) {
  auto j = java();
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto me = rw.read_lock().owner_field(relock::owner::current_thread());
  rw.write_lock().lock();
  rw.read_lock().lock();
  EXPECT_EQ(j.call_ok("b", "trylock read:doc 0"), false);

  auto waiting = j.send("c", "trylock read:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers("redisson_rwlock:{doc}") >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(waiting, 300ms), std::runtime_error);  // still waiting
  const auto downgraded = steady::now();
  rw.write_lock().unlock();
  auto r = j.wait_reply(waiting, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(downgraded, r), 2'000'000'000) << r.dump();

  EXPECT_EQ(j.call_ok("b", "trylock read:doc 0 30000"), true);
  EXPECT_EQ(j.call_ok("d", "trylock write:doc 0"), false);
  EXPECT_EQ(
      hash_of("doc"),
      (fields{{"mode", "read"}, {me, "1"}, {j.owner_field("b"), "1"}, {j.owner_field("c"), "1"}}));
  ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
  ASSERT_EQ(j.call_ok("c", "unlock read:doc"), true);
  EXPECT_EQ(j.call_ok("d", "trylock write:doc 0"), false);  // the C++ read is still held
  rw.read_lock().unlock();
  EXPECT_FALSE(exists("doc"));
  EXPECT_EQ(timeout_keys(), 0u);
}

// A write release, by either language, wakes the waiting readers of both at once: the writer's
// hold had ~30 s left, so they woke on the message, not on the TTL.
TEST_P(rwlock_interop, a_write_release_wakes_waiting_readers_of_both_languages_promptly) {
  auto j = java();
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const std::string channel = "redisson_rwlock:{doc}";

  // Two Java readers ("b", "c") and two C++ readers wait behind `release`'s writer; returns
  // after checking every one got in promptly and then letting them all go.
  auto readers_wait_for = [&](const char* who, auto release) {
    SCOPED_TRACE(who);
    const relock::owner cpp[] = {relock::owner::unique(), relock::owner::unique()};
    auto jb = j.send("b", "trylock read:doc 20000 30000");
    auto jc = j.send("c", "trylock read:doc 20000 30000");
    std::vector<std::future<outcome>> mine;
    for (auto o : cpp) mine.push_back(try_as(rw.read_lock(), o, 20s));
    // Redisson's subscription and relock's: one connection each, whatever the waiters.
    ASSERT_TRUE(wait_until([&] { return subscribers(channel) >= 2; }, 10s));
    EXPECT_THROW(j.wait_reply(jb, 300ms), std::runtime_error);  // still waiting
    for (auto& f : mine) EXPECT_FALSE(ready(f)) << "a C++ reader got past the writer";
    ASSERT_GT(pttl("doc"), 20'000);

    const auto released = steady::now();
    release();
    for (const auto& id : {jb, jc}) {
      auto r = j.wait_reply(id, 5s);
      EXPECT_EQ(r["result"], true) << r.dump();
      EXPECT_LT(ns_after(released, r), 2'000'000'000) << r.dump();
    }
    for (auto& f : mine) {
      ASSERT_TRUE(ready(f, 5s));
      auto got = f.get();
      EXPECT_FALSE(got.ec) << got.ec.message();
      EXPECT_TRUE(got.acquired);
      EXPECT_LT(got.at - released, 2s);
    }
    auto h = hash_of("doc");
    EXPECT_EQ(h["mode"], "read");
    EXPECT_EQ(h.size(), 5u);  // mode and the four readers, all in together

    ASSERT_EQ(j.call_ok("b", "unlock read:doc"), true);
    ASSERT_EQ(j.call_ok("c", "unlock read:doc"), true);
    for (auto o : cpp) unlock_as(rw.read_lock(), o);
    EXPECT_FALSE(exists("doc"));
  };

  ASSERT_EQ(j.call_ok("a", "lock write:doc"), true);  // Redisson's watchdog: 30 s
  readers_wait_for("a Java writer", [&] { ASSERT_EQ(j.call_ok("a", "unlock write:doc"), true); });
  rw.write_lock().lock();  // relock's watchdog: 30 s
  readers_wait_for("a C++ writer", [&] { rw.write_lock().unlock(); });
  EXPECT_EQ(timeout_keys(), 0u);
}

// Redisson's watchdog (3 s) keeps a Java read hold alive while a relock writer waits well past
// it; once Java lets go, the waiting writer gets in at once.
TEST_P(rwlock_interop, redissons_watchdog_keeps_a_read_hold_against_a_cpp_writer) {
  auto j = java(3s);
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto fa = j.owner_field("a");
  ASSERT_EQ(j.call_ok("a", "lock read:doc"), true);
  EXPECT_LE(pttl("doc"), 3'000);

  const auto started = steady::now();
  EXPECT_FALSE(rw.write_lock().try_lock(8s));
  EXPECT_GE(steady::now() - started, 8s);
  EXPECT_TRUE(rw.read_lock().is_held_by(fa));
  EXPECT_TRUE(exists(timeout_key("doc", fa)));
  EXPECT_EQ(j.call_ok("a", "isheld read:doc"), true);

  auto writer = try_as(rw.write_lock(), relock::owner::unique(), 20s);
  EXPECT_FALSE(ready(writer, 300ms));
  const auto released = steady::now();
  ASSERT_EQ(j.call_ok("a", "unlock read:doc"), true);
  ASSERT_TRUE(ready(writer, 5s));
  auto got = writer.get();
  EXPECT_FALSE(got.ec) << got.ec.message();
  EXPECT_TRUE(got.acquired);
  EXPECT_LT(got.at - released, 2s);
  EXPECT_EQ(hash_of("doc").at("mode"), "write");
  EXPECT_TRUE(rw.write_lock().force_unlock());
  EXPECT_EQ(timeout_keys(), 0u);
}

// relock's watchdog (watchdog_lease 3 s) keeps a C++ read hold alive while a Java writer waits
// well past it; once relock lets go, a waiting Java writer gets in at once.
TEST_P(rwlock_interop, relocks_watchdog_keeps_a_read_hold_against_a_java_writer) {
  auto j = java();
  relock::client client(settings(3s));
  auto rw = client.read_write_lock("doc");
  const auto me = rw.read_lock().owner_field(relock::owner::current_thread());
  rw.read_lock().lock();
  EXPECT_LE(pttl("doc"), 3'000);

  auto refused = j.call("a", "trylock write:doc 8000", 20s);
  EXPECT_EQ(refused["result"], false) << refused.dump();
  EXPECT_GE(took_ns(refused), 7'900'000'000);
  EXPECT_EQ(rw.read_lock().hold_count(), 1);
  EXPECT_TRUE(exists(timeout_key("doc", me)));
  EXPECT_EQ(j.call_ok("a", "islocked read:doc"), true);

  auto waiting = j.send("b", "trylock write:doc 20000 30000");
  ASSERT_TRUE(wait_until([&] { return subscribers("redisson_rwlock:{doc}") >= 1; }, 10s));
  EXPECT_THROW(j.wait_reply(waiting, 300ms), std::runtime_error);  // still waiting
  const auto released = steady::now();
  rw.read_lock().unlock();
  auto r = j.wait_reply(waiting, 5s);
  EXPECT_EQ(r["result"], true) << r.dump();
  EXPECT_LT(ns_after(released, r), 2'000'000'000) << r.dump();
  ASSERT_EQ(j.call_ok("b", "unlock write:doc"), true);
  EXPECT_FALSE(exists("doc"));
  EXPECT_EQ(timeout_keys(), 0u);
}

// A Redisson reader killed with SIGKILL: nobody renews its share any more, and a relock writer
// waiting behind it gets in within Redisson's watchdog timeout (3 s) plus a margin.
TEST_P(rwlock_interop, a_killed_redisson_reader_frees_its_share_for_a_cpp_writer) {
  auto j = java(3s);
  relock::client client(settings());
  auto rw = client.read_write_lock("doc");
  const auto fa = j.owner_field("a");
  ASSERT_EQ(j.call_ok("a", "lock read:doc"), true);
  EXPECT_FALSE(rw.write_lock().try_lock());

  const auto ttl = std::chrono::milliseconds(pttl("doc"));
  const auto killed = steady::now();
  j.kill(SIGKILL);
  EXPECT_TRUE(rw.write_lock().try_lock(10s));
  const auto took = steady::now() - killed;
  EXPECT_GE(took, ttl - 200ms);  // not before the dead reader's share could have run out
  EXPECT_LT(took, 3s + 1500ms);  // within Redisson's watchdog timeout plus a margin
  EXPECT_FALSE(exists(timeout_key("doc", fa)));
  const auto me = rw.write_lock().owner_field(relock::owner::current_thread());
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "write"}, {me, "1"}}));
  rw.write_lock().unlock();
  EXPECT_FALSE(exists("doc"));
  EXPECT_TRUE(j.wait_exit(5s));
}

// A live relock reader renews only its own share (every 500 ms here): the dead Java reader's
// read-hold timeout key runs out within Redisson's watchdog timeout all the same, and once the
// C++ reader leaves, the relock writer waiting all along gets in at once; the dead share left on
// paper in the hash counts for nothing.
TEST_P(rwlock_interop, a_live_cpp_readers_renewals_never_keep_a_dead_java_readers_share) {
  auto j = java(3s);
  relock::client client(settings(1500ms));
  auto rw = client.read_write_lock("doc");
  const auto fa = j.owner_field("a");
  const auto me = rw.read_lock().owner_field(relock::owner::current_thread());
  ASSERT_EQ(j.call_ok("a", "lock read:doc"), true);
  rw.read_lock().lock();
  const auto writer_owner = relock::owner::unique();
  auto writer = try_as(rw.write_lock(), writer_owner, 30s);
  EXPECT_FALSE(ready(writer, 300ms));

  const auto killed = steady::now();
  j.kill(SIGKILL);
  ASSERT_TRUE(wait_until([&] { return !exists(timeout_key("doc", fa)); }, 3s + 1500ms))
      << "the dead Java reader's share was kept alive";
  EXPECT_LT(steady::now() - killed, 3s + 1500ms);
  // The C++ reader's own hold outlives it (its lease is 1.5 s: renewed), and keeps the writer out.
  EXPECT_TRUE(exists(timeout_key("doc", me)));
  EXPECT_EQ(rw.read_lock().hold_count(), 1);
  EXPECT_EQ(hash_of("doc"), (fields{{"mode", "read"}, {fa, "1"}, {me, "1"}}));
  EXPECT_FALSE(ready(writer));

  // Past two more of the C++ reader's renewals, the dead share is still gone for good.
  ASSERT_FALSE(wait_until([&] { return exists(timeout_key("doc", fa)); }, 1200ms));
  EXPECT_FALSE(ready(writer));

  const auto released = steady::now();
  rw.read_lock().unlock();
  ASSERT_TRUE(ready(writer, 5s));
  auto got = writer.get();
  EXPECT_FALSE(got.ec) << got.ec.message();
  EXPECT_TRUE(got.acquired);
  EXPECT_LT(got.at - released, 2s);
  EXPECT_EQ(hash_of("doc"),
            (fields{{"mode", "write"}, {rw.write_lock().owner_field(writer_owner), "1"}}));
  unlock_as(rw.write_lock(), writer_owner);
  EXPECT_FALSE(exists("doc"));
  EXPECT_EQ(timeout_keys(), 0u);
  EXPECT_TRUE(j.wait_exit(5s));
}

INSTANTIATE_TEST_SUITE_P(redisson, rwlock_interop,
                         ::testing::ValuesIn(redisson_driver::jar_params()),
                         [](const auto& info) { return redisson_driver::param_name(info.param); });
