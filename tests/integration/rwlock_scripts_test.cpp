// SPDX-License-Identifier: Apache-2.0
// The read-write lock's scripts (data-layout §4), driven directly through the executor on a real
// server: what each one decides, the data it leaves (fields, counts, read-hold timeout keys and
// their TTLs), the messages it sends, and what it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "support/expect_messages.hpp"
#include "support/lock_env.hpp"
#include "support/raw_subscriber.hpp"
#include "support/rwlock_calls.hpp"
#include "support/sync_calls.hpp"

namespace rwlock_scripts_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
namespace obj = relock::layout;

namespace {

// Owner fields as relock writes them: <client uuid>:<owner number>.
const std::string A = "11111111-1111-4111-8111-111111111111:1";
const std::string B = "11111111-1111-4111-8111-111111111111:2";
const std::string C = "22222222-2222-4222-8222-222222222222:7";

using rw = relock::test::rwlock_calls;

bool acquired(const result& r) { return !r.ec && r.value.is_nil(); }

// A refused acquire: the holder's PTTL (fails the test on anything else).
std::int64_t refused(const result& r) {
  EXPECT_FALSE(r.ec) << r.value.str;
  EXPECT_TRUE(r.value.is_integer()) << relock::resp::to_string(r.value);
  return r.value.integer;
}

std::int64_t answer(const result& r) {
  EXPECT_FALSE(r.ec) << r.value.str;
  EXPECT_TRUE(r.value.is_integer()) << relock::resp::to_string(r.value);
  return r.value.is_integer() ? r.value.integer : -100;
}

std::map<std::string, std::string> hash_of(raw_client& raw, const std::string& key) {
  std::map<std::string, std::string> out;
  auto r = raw.command({"HGETALL", key});
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out[r.elements[i].str] = r.elements[i + 1].str;
  }
  return out;
}

std::int64_t pttl(raw_client& raw, const std::string& key) {
  return raw.command({"PTTL", key}).integer;
}

bool exists(raw_client& raw, const std::string& key) {
  return raw.command({"EXISTS", key}).integer == 1;
}

std::vector<std::string> keys_matching(raw_client& raw, const std::string& pattern) {
  std::vector<std::string> out;
  for (auto& e : raw.command({"KEYS", pattern}).elements) out.push_back(e.str);
  std::sort(out.begin(), out.end());
  return out;
}

// Every key of the database: its DUMP and PTTL, to show that a call changed nothing.
struct key_state {
  std::string dump;
  std::int64_t pttl;
};
std::map<std::string, key_state> snapshot(raw_client& raw) {
  std::map<std::string, key_state> out;
  for (const auto& key : keys_matching(raw, "*")) {
    out[key] = {raw.command({"DUMP", key}).str, pttl(raw, key)};
  }
  return out;
}
void expect_unchanged(const std::map<std::string, key_state>& before,
                      const std::map<std::string, key_state>& after) {
  ASSERT_EQ(before.size(), after.size());
  for (const auto& [key, was] : before) {
    auto it = after.find(key);
    ASSERT_NE(it, after.end()) << key;
    EXPECT_EQ(it->second.dump, was.dump) << key;
    if (was.pttl < 0) {
      EXPECT_EQ(it->second.pttl, was.pttl) << key;
    } else {  // it ticks down meanwhile, never up
      EXPECT_LE(it->second.pttl, was.pttl) << key;
      EXPECT_GT(it->second.pttl, was.pttl - 2'000) << key;
    }
  }
}

struct env {
  redis_server server;
  relock::client client{settings_for(server)};
  raw_client raw = raw_client::to(server);
  relock::exec::executor& ex = relock::detail::core_of(client)->executor();
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Who may hold with whom

TEST(rwlock_scripts, read_holds_are_shared_and_reentrant_and_leave_redissons_data) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 5'000)));
  ASSERT_TRUE(acquired(doc.read(B, 20'000)));
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));

  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "read"}, {A, "2"}, {B, "1"}}));
  // One timeout key per read hold: {doc}:<owner>:rwlock_timeout:<n> = 1, PX its own lease.
  EXPECT_EQ(keys_matching(e.raw, "*rwlock_timeout*"),
            (std::vector<std::string>{"{doc}:" + A + ":rwlock_timeout:1",
                                      "{doc}:" + A + ":rwlock_timeout:2",
                                      "{doc}:" + B + ":rwlock_timeout:1"}));
  EXPECT_EQ(e.raw.command({"GET", doc.timeout_key(A, 1)}).str, "1");
  auto a1 = pttl(e.raw, doc.timeout_key(A, 1));
  auto a2 = pttl(e.raw, doc.timeout_key(A, 2));
  auto b1 = pttl(e.raw, doc.timeout_key(B, 1));
  EXPECT_GT(a1, 3'000);
  EXPECT_LE(a1, 5'000);
  EXPECT_GT(a2, 8'000);
  EXPECT_LE(a2, 10'000);
  EXPECT_GT(b1, 18'000);
  EXPECT_LE(b1, 20'000);
  // The hash lives as long as the longest hold: B's, not the latest (shorter) acquire's lease.
  auto h = pttl(e.raw, "doc");
  EXPECT_GE(h, b1 - 50);
  EXPECT_LE(h, 20'000);
  // The field order is Redisson's: mode first.
  EXPECT_EQ(e.raw.command({"HKEYS", "doc"}).elements.at(0).str, "mode");
}

TEST(rwlock_scripts, same_owner_write_then_write_reenters_and_adds_the_lease) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.write(A, 10'000)));
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "write"}, {A + ":write", "1"}}));
  auto first = pttl(e.raw, "doc");
  EXPECT_GT(first, 8'000);
  EXPECT_LE(first, 10'000);
  ASSERT_TRUE(acquired(doc.write(A, 10'000)));
  EXPECT_EQ(hash_of(e.raw, "doc")[A + ":write"], "2");
  // Redisson's write re-entry: TTL = PTTL + lease.
  auto second = pttl(e.raw, "doc");
  EXPECT_GT(second, 18'000);
  EXPECT_LE(second, 20'000);
  EXPECT_TRUE(keys_matching(e.raw, "*rwlock_timeout*").empty());  // write holds have none
}

TEST(rwlock_scripts, same_owner_write_then_read_is_a_downgrade) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.write(A, 30'000)));
  ASSERT_TRUE(acquired(doc.read(A, 5'000)));
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "write"}, {A + ":write", "1"}, {A, "1"}}));
  EXPECT_LE(pttl(e.raw, doc.timeout_key(A, 1)), 5'000);
  EXPECT_GT(pttl(e.raw, "doc"), 25'000);  // the write's lease is not cut to the read's
  // Still a writer: it may re-enter either side.
  ASSERT_TRUE(acquired(doc.write(A, 1'000)));
  ASSERT_TRUE(acquired(doc.read(A, 1'000)));
  EXPECT_EQ(hash_of(e.raw, "doc")[A + ":write"], "2");
  EXPECT_EQ(hash_of(e.raw, "doc")[A], "2");
  // Other owners get neither side.
  EXPECT_GT(refused(doc.read(B, 5'000)), 25'000);
  EXPECT_GT(refused(doc.write(B, 5'000)), 25'000);
}

TEST(rwlock_scripts, same_owner_read_then_write_is_refused_at_once_as_an_upgrade) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 30'000)));
  auto before = snapshot(e.raw);
  auto r = doc.write(A, 30'000);
  EXPECT_EQ(r.ec, errc::server_error);
  ASSERT_TRUE(r.value.is_error());
  EXPECT_EQ(r.value.error_code(), "RWLOCK_UPGRADE") << r.value.str;
  expect_unchanged(before, snapshot(e.raw));

  // Also with other readers beside it, and after a downgrade has completed.
  ASSERT_TRUE(acquired(doc.read(B, 30'000)));
  EXPECT_EQ(doc.write(A, 30'000).value.error_code(), "RWLOCK_UPGRADE");
  EXPECT_EQ(doc.write(B, 30'000).value.error_code(), "RWLOCK_UPGRADE");
  // A reader's neighbour who holds no read is simply refused with the TTL.
  EXPECT_GT(refused(doc.write(C, 30'000)), 25'000);

  rw down(e.ex, "down");
  ASSERT_TRUE(acquired(down.write(A, 30'000)));
  ASSERT_TRUE(acquired(down.read(A, 30'000)));
  ASSERT_EQ(answer(down.write_release(A, 30'000)), 1);
  EXPECT_EQ(down.write(A, 30'000).value.error_code(), "RWLOCK_UPGRADE");
}

TEST(rwlock_scripts, different_owners_share_only_read_with_read) {
  env e;
  rw r(e.ex, "r");
  ASSERT_TRUE(acquired(r.read(A, 10'000)));
  ASSERT_TRUE(acquired(r.read(B, 10'000)));
  auto ttl = refused(r.write(C, 10'000));
  EXPECT_GT(ttl, 8'000);
  EXPECT_LE(ttl, 10'000);

  rw w(e.ex, "w");
  ASSERT_TRUE(acquired(w.write(A, 10'000)));
  auto t1 = refused(w.read(B, 10'000));
  auto t2 = refused(w.write(B, 10'000));
  EXPECT_GT(t1, 8'000);
  EXPECT_LE(t1, 10'000);
  EXPECT_GT(t2, 8'000);
  EXPECT_LE(t2, 10'000);
  EXPECT_EQ(hash_of(e.raw, "w"),
            (std::map<std::string, std::string>{{"mode", "write"}, {A + ":write", "1"}}));
  EXPECT_EQ(keys_matching(e.raw, "*rwlock_timeout*").size(), 2u);  // r's; w has none
}

// ---------------------------------------------------------------------------------------------
// Releases

TEST(rwlock_scripts, write_release_counts_down_then_deletes_and_wakes_everyone) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.write(A, 10'000)));
  ASSERT_TRUE(acquired(doc.write(A, 10'000)));

  EXPECT_TRUE(doc.write_release(B, 10'000).value.is_nil());  // not the writer
  EXPECT_TRUE(keys_matching(e.raw, "redisson_unlock_latch:*").empty());

  EXPECT_EQ(answer(doc.write_release(A, 3'000)), 0);
  EXPECT_EQ(hash_of(e.raw, "doc")[A + ":write"], "1");
  EXPECT_LE(pttl(e.raw, "doc"), 3'000);  // the lease to restore
  EXPECT_GT(pttl(e.raw, "doc"), 1'000);
  expect_messages(e.raw, sub, doc.channel(), {});

  EXPECT_EQ(answer(doc.write_release(A, 3'000)), 1);
  EXPECT_FALSE(exists(e.raw, "doc"));
  expect_messages(e.raw, sub, doc.channel(), {"1"});

  // Nothing left to release: nil, but the waiters are told anyway (as Redisson does).
  auto gone = doc.write_release(A, 3'000);
  EXPECT_FALSE(gone.ec);
  EXPECT_TRUE(gone.value.is_nil());
  expect_messages(e.raw, sub, doc.channel(), {"1"});
  // Latches were written only by the releases that changed something.
  EXPECT_EQ(keys_matching(e.raw, "redisson_unlock_latch:*").size(), 2u);
}

TEST(rwlock_scripts, a_read_release_by_a_reader_is_not_a_write_release) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));
  // A reader holds no write: the write release finds nothing of its own.
  EXPECT_TRUE(doc.write_release(A, 10'000).value.is_nil());
  EXPECT_EQ(hash_of(e.raw, "doc")[A], "1");
  // A writer's read release finds no read.
  rw w(e.ex, "w");
  ASSERT_TRUE(acquired(w.write(A, 10'000)));
  EXPECT_TRUE(w.read_release(A).value.is_nil());
  EXPECT_EQ(hash_of(e.raw, "w")[A + ":write"], "1");
  EXPECT_TRUE(keys_matching(e.raw, "redisson_unlock_latch:*").empty());
}

TEST(rwlock_scripts, read_release_deletes_its_timeout_key_and_the_last_one_frees_the_lock) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));
  ASSERT_TRUE(acquired(doc.read(B, 10'000)));

  EXPECT_TRUE(doc.read_release(C).value.is_nil());  // not a holder
  EXPECT_EQ(answer(doc.read_release(A)), 0);
  EXPECT_EQ(hash_of(e.raw, "doc")[A], "1");
  EXPECT_TRUE(exists(e.raw, doc.timeout_key(A, 1)));
  EXPECT_FALSE(exists(e.raw, doc.timeout_key(A, 2)));  // the highest hold is the one let go
  EXPECT_EQ(answer(doc.read_release(A)), 0);           // B still reads
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "read"}, {B, "1"}}));
  EXPECT_FALSE(exists(e.raw, doc.timeout_key(A, 1)));
  expect_messages(e.raw, sub, doc.channel(), {});

  EXPECT_EQ(answer(doc.read_release(B)), 1);
  EXPECT_FALSE(exists(e.raw, "doc"));
  EXPECT_TRUE(keys_matching(e.raw, "*rwlock_timeout*").empty());
  expect_messages(e.raw, sub, doc.channel(), {"0"});

  // The lock gone: nil, waiters told anyway (Redisson does the same), no latch written.
  auto latches = keys_matching(e.raw, "redisson_unlock_latch:*").size();
  EXPECT_TRUE(doc.read_release(B).value.is_nil());
  expect_messages(e.raw, sub, doc.channel(), {"0"});
  EXPECT_EQ(keys_matching(e.raw, "redisson_unlock_latch:*").size(), latches);
}

TEST(rwlock_scripts, read_release_sets_the_hash_ttl_to_the_longest_remaining_read_hold) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 4'000)));
  ASSERT_TRUE(acquired(doc.read(B, 8'000)));
  ASSERT_TRUE(acquired(doc.read(C, 30'000)));
  EXPECT_GT(pttl(e.raw, "doc"), 25'000);
  ASSERT_EQ(answer(doc.read_release(C)), 0);
  // Now B's hold is the longest: the hash follows it, of any owner, down from 30 s.
  auto h = pttl(e.raw, "doc");
  auto b = pttl(e.raw, doc.timeout_key(B, 1));
  EXPECT_LE(h, 8'000);
  EXPECT_GE(h, b);
  EXPECT_LT(h - b, 500);
  ASSERT_EQ(answer(doc.read_release(B)), 0);
  h = pttl(e.raw, "doc");
  EXPECT_LE(h, 4'000);
  EXPECT_GE(h, pttl(e.raw, doc.timeout_key(A, 1)));
}

TEST(rwlock_scripts, leased_read_holds_expire_one_by_one_and_the_hash_follows) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 300)));
  ASSERT_TRUE(acquired(doc.read(B, 1'500)));
  ASSERT_TRUE(acquired(doc.read(C, 20'000)));
  ASSERT_EQ(answer(doc.read_release(C)), 0);
  EXPECT_LE(pttl(e.raw, "doc"), 1'500);

  // A's lease runs out first: its timeout key goes, the lock stays (B's lease runs on).
  ASSERT_TRUE(wait_until([&] { return !exists(e.raw, doc.timeout_key(A, 1)); }, 3s));
  EXPECT_TRUE(exists(e.raw, "doc"));
  EXPECT_TRUE(exists(e.raw, doc.timeout_key(B, 1)));
  EXPECT_GT(refused(doc.write(C, 1'000)), 0);
  // Then B's: the hash goes with it, and a writer gets in.
  ASSERT_TRUE(wait_until([&] { return !exists(e.raw, "doc"); }, 3s));
  EXPECT_FALSE(exists(e.raw, doc.timeout_key(B, 1)));
  EXPECT_TRUE(acquired(doc.write(C, 1'000)));
}

TEST(rwlock_scripts, a_read_release_drops_holds_whose_leases_ran_out) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.read(A, 200)));
  ASSERT_TRUE(acquired(doc.read(B, 20'000)));
  ASSERT_TRUE(wait_until([&] { return !exists(e.raw, doc.timeout_key(A, 1)); }, 3s));
  EXPECT_EQ(hash_of(e.raw, "doc")[A], "1");  // on paper only: its lease is over
  // B's release finds no live hold left: the lock is free, waiters told.
  EXPECT_EQ(answer(doc.read_release(B)), 1);
  EXPECT_FALSE(exists(e.raw, "doc"));
  expect_messages(e.raw, sub, doc.channel(), {"0"});
  // A's late release finds nothing.
  EXPECT_TRUE(doc.read_release(A).value.is_nil());
}

TEST(rwlock_scripts, a_downgraded_writer_keeps_its_write_lease_when_a_read_goes) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.write(A, 30'000)));
  ASSERT_TRUE(acquired(doc.read(A, 1'000)));
  ASSERT_TRUE(acquired(doc.read(A, 1'000)));
  EXPECT_EQ(answer(doc.read_release(A)), 0);
  EXPECT_GT(pttl(e.raw, "doc"), 25'000);      // not cut to the remaining read's 1 s
  EXPECT_EQ(answer(doc.read_release(A)), 0);  // still the writer
  EXPECT_GT(pttl(e.raw, "doc"), 25'000);
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "write"}, {A + ":write", "1"}}));
  expect_messages(e.raw, sub, doc.channel(), {});
  EXPECT_EQ(answer(doc.write_release(A, 30'000)), 1);
  EXPECT_FALSE(exists(e.raw, "doc"));
  expect_messages(e.raw, sub, doc.channel(), {"1"});
}

TEST(rwlock_scripts, write_release_with_reads_left_downgrades_and_lets_readers_in) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.write(A, 30'000)));
  ASSERT_TRUE(acquired(doc.read(A, 30'000)));
  EXPECT_GT(refused(doc.read(B, 30'000)), 0);

  EXPECT_EQ(answer(doc.write_release(A, 30'000)), 1);
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "read"}, {A, "1"}}));
  EXPECT_TRUE(exists(e.raw, doc.timeout_key(A, 1)));
  // Waiting readers are told (wake all): they may come in now. Writers stay out.
  expect_messages(e.raw, sub, doc.channel(), {"1"});
  EXPECT_TRUE(acquired(doc.read(B, 30'000)));
  EXPECT_GT(refused(doc.write(C, 30'000)), 0);

  EXPECT_EQ(answer(doc.read_release(A)), 0);
  EXPECT_EQ(answer(doc.read_release(B)), 1);
  EXPECT_FALSE(exists(e.raw, "doc"));
  EXPECT_TRUE(keys_matching(e.raw, "*rwlock_timeout*").empty());
  expect_messages(e.raw, sub, doc.channel(), {"0"});
}

TEST(rwlock_scripts, a_resent_release_does_not_count_down_twice) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));
  ASSERT_TRUE(acquired(doc.read(A, 10'000)));

  const auto r1 = obj::random_request_id();
  EXPECT_EQ(answer(doc.read_release(A, r1)), 0);
  EXPECT_EQ(answer(doc.read_release(A, r1)), 0);  // the same request again: the stored answer
  EXPECT_EQ(hash_of(e.raw, "doc")[A], "2");
  EXPECT_EQ(e.raw.command({"GET", doc.latch(r1)}).str, "0");
  auto latch_ttl_left = pttl(e.raw, doc.latch(r1));
  EXPECT_GT(latch_ttl_left, 15'000);
  EXPECT_LE(latch_ttl_left, 20'000);

  EXPECT_EQ(answer(doc.read_release(A)), 0);
  const auto r2 = obj::random_request_id();
  EXPECT_EQ(answer(doc.read_release(A, r2)), 1);
  expect_messages(e.raw, sub, doc.channel(), {"0"});
  // Resent after the lock is gone, and after someone else took it: still 1, nothing touched,
  // nothing published again.
  ASSERT_TRUE(acquired(doc.read(B, 10'000)));
  EXPECT_EQ(answer(doc.read_release(A, r2)), 1);
  EXPECT_EQ(hash_of(e.raw, "doc"),
            (std::map<std::string, std::string>{{"mode", "read"}, {B, "1"}}));
  expect_messages(e.raw, sub, doc.channel(), {});

  rw w(e.ex, "w");
  ASSERT_TRUE(acquired(w.write(A, 10'000)));
  ASSERT_TRUE(acquired(w.write(A, 10'000)));
  const auto r3 = obj::random_request_id();
  EXPECT_EQ(answer(w.write_release(A, 10'000, r3)), 0);
  EXPECT_EQ(answer(w.write_release(A, 10'000, r3)), 0);
  EXPECT_EQ(hash_of(e.raw, "w")[A + ":write"], "1");
  const auto r4 = obj::random_request_id();
  EXPECT_EQ(answer(w.write_release(A, 10'000, r4)), 1);
  ASSERT_TRUE(acquired(w.write(B, 10'000)));
  EXPECT_EQ(answer(w.write_release(A, 10'000, r4)), 1);
  EXPECT_EQ(hash_of(e.raw, "w")[B + ":write"], "1");
  EXPECT_EQ(e.raw.command({"GET", w.latch(r4)}).str, "1");
}

// ---------------------------------------------------------------------------------------------
// Renewal

TEST(rwlock_scripts, renew_touches_only_its_owners_timeout_keys) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(A, 2'000)));
  ASSERT_TRUE(acquired(doc.read(A, 2'000)));
  ASSERT_TRUE(acquired(doc.read(B, 2'000)));

  auto r = doc.renew_read(A, 2, 30'000);
  ASSERT_FALSE(r.ec) << r.value.str;
  ASSERT_EQ(r.value.elements.size(), 1u);
  EXPECT_EQ(r.value.elements[0].integer, 1);
  EXPECT_GT(pttl(e.raw, doc.timeout_key(A, 1)), 25'000);
  EXPECT_GT(pttl(e.raw, doc.timeout_key(A, 2)), 25'000);
  EXPECT_GT(pttl(e.raw, "doc"), 25'000);
  EXPECT_LE(pttl(e.raw, doc.timeout_key(B, 1)), 2'000);  // B's lease is B's business

  EXPECT_EQ(doc.renew_read(C, 1, 30'000).value.elements.at(0).integer, 0);  // holds nothing
  // B's hold runs out while A is renewed; B's field stays on paper, its key is gone.
  ASSERT_TRUE(wait_until([&] { return !exists(e.raw, doc.timeout_key(B, 1)); }, 4s));
  EXPECT_EQ(doc.renew_read(A, 2, 30'000).value.elements.at(0).integer, 1);
  EXPECT_FALSE(exists(e.raw, doc.timeout_key(B, 1)));
}

TEST(rwlock_scripts, renew_in_read_mode_never_shortens_the_hash) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.read(B, 60'000)));
  ASSERT_TRUE(acquired(doc.read(A, 1'000)));
  EXPECT_EQ(doc.renew_read(A, 1, 5'000).value.elements.at(0).integer, 1);
  EXPECT_GT(pttl(e.raw, "doc"), 55'000);  // B's lease still counts
  EXPECT_GT(pttl(e.raw, doc.timeout_key(A, 1)), 4'000);
  EXPECT_GT(pttl(e.raw, doc.timeout_key(B, 1)), 55'000);
}

TEST(rwlock_scripts, renew_of_a_writer_sets_its_hash_and_each_side_renews_its_own_keys) {
  env e;
  rw doc(e.ex, "doc");
  ASSERT_TRUE(acquired(doc.write(A, 2'000)));
  ASSERT_TRUE(acquired(doc.write(A, 2'000)));  // additive: about 4 s
  ASSERT_TRUE(acquired(doc.read(A, 1'000)));
  EXPECT_EQ(doc.renew_write(A, 10'000).value.elements.at(0).integer, 1);
  auto h = pttl(e.raw, "doc");
  EXPECT_GT(h, 8'000);
  EXPECT_LE(h, 10'000);
  // The write hold's renewal leaves the read hold's timeout key to the read hold's renewal.
  EXPECT_LE(pttl(e.raw, doc.timeout_key(A, 1)), 1'000);
  EXPECT_EQ(doc.renew_read(A, 1, 10'000).value.elements.at(0).integer, 1);
  EXPECT_GT(pttl(e.raw, doc.timeout_key(A, 1)), 8'000);
  // In write mode the lease is set, not only lengthened: a renewal brings it back to the lease.
  EXPECT_EQ(doc.renew_write(A, 3'000).value.elements.at(0).integer, 1);
  EXPECT_LE(pttl(e.raw, "doc"), 3'000);
  EXPECT_EQ(doc.renew_write(B, 10'000).value.elements.at(0).integer, 0);
  EXPECT_EQ(doc.renew_read(B, 1, 10'000).value.elements.at(0).integer, 0);
}

TEST(rwlock_scripts, renew_batches_keys_and_reports_each) {
  env e;
  rw one(e.ex, "{batch}one");
  rw two(e.ex, "{batch}two");
  rw tagged(e.ex, "app:{batch}");
  rw gone(e.ex, "{batch}gone");
  ASSERT_TRUE(acquired(one.read(A, 1'000)));
  ASSERT_TRUE(acquired(two.write(B, 1'000)));
  ASSERT_TRUE(acquired(tagged.read(A, 1'000)));
  e.raw.command({"SET", "{batch}str", "v"});
  e.raw.command({"HSET", "{batch}plain", A, "1"});

  // Built the way the watchdog builds a batch: each hold appends its keys and arguments.
  const auto& read = relock::detail::locks::rwlock_read_kind.renew;
  const auto& write = relock::detail::locks::rwlock_write_kind.renew;
  std::vector<std::string> keys, args{"20000"};
  read.append("{batch}one", A, 1, keys, args);
  write.append("{batch}two", B, 1, keys, args);
  read.append("app:{batch}", A, 1, keys, args);
  read.append("{batch}gone", A, 1, keys, args);
  read.append("{batch}str", A, 1, keys, args);
  read.append("{batch}plain", A, 1, keys, args);
  auto r = eval(e.ex, read.script, keys, args);
  ASSERT_FALSE(r.ec) << r.value.str;
  ASSERT_EQ(r.value.elements.size(), 6u);
  std::vector<std::int64_t> got;
  for (auto& x : r.value.elements) got.push_back(x.integer);
  EXPECT_EQ(got, (std::vector<std::int64_t>{1, 1, 1, 0, 0, 0}));
  EXPECT_GT(pttl(e.raw, one.timeout_key(A, 1)), 15'000);
  EXPECT_GT(pttl(e.raw, "{batch}two"), 15'000);
  // A name with its own tag: the timeout key is app:{batch}:<owner>:rwlock_timeout:1.
  EXPECT_EQ(tagged.timeout_key(A, 1), "app:{batch}:" + A + ":rwlock_timeout:1");
  EXPECT_GT(pttl(e.raw, tagged.timeout_key(A, 1)), 15'000);
  EXPECT_GT(pttl(e.raw, "app:{batch}"), 15'000);
  // Keys that are no read-write lock are left alone.
  EXPECT_EQ(pttl(e.raw, "{batch}str"), -1);
  EXPECT_EQ(pttl(e.raw, "{batch}plain"), -1);
  EXPECT_FALSE(exists(e.raw, "{batch}gone"));
}

TEST(rwlock_scripts, a_tagged_name_finds_every_owners_timeout_keys) {
  env e;
  rw doc(e.ex, "app:{doc}");
  ASSERT_TRUE(acquired(doc.read(A, 20'000)));
  ASSERT_TRUE(acquired(doc.read(B, 30'000)));
  EXPECT_TRUE(exists(e.raw, "app:{doc}:" + A + ":rwlock_timeout:1"));
  ASSERT_EQ(answer(doc.read_release(B)), 0);
  // Rebuilt from the key prefix app:{doc}: A's hold is found, so the hash follows it.
  EXPECT_GT(pttl(e.raw, "app:{doc}"), 15'000);
  EXPECT_LE(pttl(e.raw, "app:{doc}"), 20'000);
  EXPECT_EQ(answer(doc.force()), 1);
  EXPECT_FALSE(exists(e.raw, "app:{doc}"));
  EXPECT_TRUE(keys_matching(e.raw, "*rwlock_timeout*").empty());
}

// ---------------------------------------------------------------------------------------------
// Force release

TEST(rwlock_scripts, force_release_deletes_the_hash_and_every_timeout_key) {
  env e;
  rw doc(e.ex, "doc");
  raw_subscriber sub(e.server, doc.channel());
  EXPECT_EQ(answer(doc.force()), 0);  // free: nothing to tell
  expect_messages(e.raw, sub, doc.channel(), {});

  ASSERT_TRUE(acquired(doc.read(A, 20'000)));
  ASSERT_TRUE(acquired(doc.read(A, 20'000)));
  ASSERT_TRUE(acquired(doc.read(B, 20'000)));
  e.raw.command({"SET", "other", "kept"});
  EXPECT_EQ(answer(doc.force()), 1);
  EXPECT_EQ(keys_matching(e.raw, "*"), std::vector<std::string>{"other"});
  expect_messages(e.raw, sub, doc.channel(), {"1"});

  ASSERT_TRUE(acquired(doc.write(A, 20'000)));
  ASSERT_TRUE(acquired(doc.read(A, 20'000)));
  EXPECT_EQ(answer(doc.force()), 1);
  EXPECT_EQ(keys_matching(e.raw, "*"), std::vector<std::string>{"other"});
  expect_messages(e.raw, sub, doc.channel(), {"1"});
  // The former holders' releases find nothing.
  EXPECT_TRUE(doc.write_release(A, 1'000).value.is_nil());
}

// ---------------------------------------------------------------------------------------------
// What is not a read-write lock is refused and left as it is

TEST(rwlock_scripts, wrong_types_are_refused_and_left_unchanged) {
  env e;
  struct setup {
    const char* what;
    std::vector<std::vector<std::string>> commands;
  };
  const std::vector<setup> cases{
      {"string", {{"SET", "x", "v"}}},
      {"list", {{"RPUSH", "x", "a", "b"}}},
      {"plain lock hash", {{"HSET", "x", A, "1"}}},
      {"plain lock hash of another owner", {{"HSET", "x", C, "2"}}},
      {"hash with an unknown mode", {{"HSET", "x", "mode", "other", A, "1"}}},
      {"hash without mode but with a write field", {{"HSET", "x", A + ":write", "1"}}},
  };
  rw x(e.ex, "x");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    e.raw.command({"FLUSHALL"});
    for (const auto& cmd : c.commands) e.raw.command(cmd);
    e.raw.command({"SET", x.timeout_key(A, 1), "1"});  // as if left by a read hold
    auto before = snapshot(e.raw);

    const std::vector<std::pair<const char*, result>> calls{
        {"read acquire", x.read(A, 10'000)}, {"write acquire", x.write(A, 10'000)},
        {"read release", x.read_release(A)}, {"write release", x.write_release(A, 10'000)},
        {"force release", x.force()},
    };
    for (const auto& [name, r] : calls) {
      EXPECT_EQ(r.ec, errc::wrong_type) << name << ": " << relock::resp::to_string(r.value);
      EXPECT_EQ(r.value.error_code(), "WRONGTYPE") << name;
    }
    auto renewed = x.renew_read(A, 1, 10'000);
    ASSERT_FALSE(renewed.ec) << renewed.value.str;
    EXPECT_EQ(renewed.value.elements.at(0).integer, 0);
    expect_unchanged(before, snapshot(e.raw));  // no latch, no timeout key, no TTL, no field
  }
}

TEST(rwlock_scripts, force_release_refuses_a_mode_hash_with_non_count_values) {
  env e;
  rw x(e.ex, "x");
  e.raw.command({"HSET", "x", "mode", "read", A, "1", "note", "hello"});
  auto before = snapshot(e.raw);
  auto r = x.force();
  EXPECT_EQ(r.ec, errc::wrong_type);
  EXPECT_NE(r.value.str.find("note"), std::string::npos) << r.value.str;
  expect_unchanged(before, snapshot(e.raw));
}

}  // namespace rwlock_scripts_test
