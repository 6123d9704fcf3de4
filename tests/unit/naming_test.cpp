// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "layout/naming.hpp"
#include "topology/slot.hpp"

using namespace relock::layout;
using relock::topology::slot_of;

TEST(naming, prefixed_and_suffixed_keep_the_hash_tag) {
  EXPECT_EQ(prefixed("redisson_lock__channel", "mylock"), "redisson_lock__channel:{mylock}");
  EXPECT_EQ(prefixed("redisson_lock__channel", "my{x}lock"), "redisson_lock__channel:my{x}lock");
  EXPECT_EQ(prefixed("p", "{a}"), "p:{a}");
  EXPECT_EQ(prefixed("p", ""), "p:{}");
  EXPECT_EQ(suffixed("a", "timeout"), "{a}:timeout");
  EXPECT_EQ(suffixed("{a}b", "timeout"), "{a}b:timeout");
  EXPECT_EQ(suffixed("a{b}", "timeout"), "a{b}:timeout");
  // Any '{' counts, even one that makes no tag: Redisson tests for the character only.
  EXPECT_EQ(prefixed("p", "a{b"), "p:a{b");
  EXPECT_EQ(suffixed("a{", "s"), "a{:s");
  // A '}' alone is plain text, so the name still gets braces.
  EXPECT_EQ(prefixed("p", "a}b"), "p:{a}b}");
}

TEST(naming, reentrant_lock) {
  EXPECT_EQ(lock_channel("orders"), "redisson_lock__channel:{orders}");
  EXPECT_EQ(lock_channel("app:{orders}"), "redisson_lock__channel:app:{orders}");
  EXPECT_EQ(unlock_latch_key("orders", "0123456789abcdef0123456789abcdef"),
            "redisson_unlock_latch:{orders}:0123456789abcdef0123456789abcdef");
  EXPECT_EQ(unlock_latch_key("a{b}", "ff"), "redisson_unlock_latch:a{b}:ff");
  // A fresh request id each time, 32 hex digits after the tagged name.
  const auto latch = random_unlock_latch_key("orders");
  const std::string head = "redisson_unlock_latch:{orders}:";
  ASSERT_EQ(latch.size(), head.size() + 32) << latch;
  EXPECT_EQ(latch.substr(0, head.size()), head);
  EXPECT_EQ(latch.find_first_not_of("0123456789abcdef", head.size()), std::string::npos) << latch;
  EXPECT_NE(random_unlock_latch_key("orders"), latch);
  EXPECT_EQ(random_unlock_latch_key("a{b}").rfind("redisson_unlock_latch:a{b}:", 0), 0u);
}

TEST(naming, fair_lock) {
  EXPECT_EQ(fair_queue_key("orders"), "redisson_lock_queue:{orders}");
  EXPECT_EQ(fair_timeout_key("orders"), "redisson_lock_timeout:{orders}");
  EXPECT_EQ(fair_waiter_channel("orders", "9f0c-uuid:7"),
            "redisson_lock__channel:{orders}:9f0c-uuid:7");
  EXPECT_EQ(fair_queue_key("x{t}"), "redisson_lock_queue:x{t}");
  EXPECT_EQ(fair_timeout_key("x{t}"), "redisson_lock_timeout:x{t}");
  EXPECT_EQ(fair_waiter_channel("x{t}", "c:1"), "redisson_lock__channel:x{t}:c:1");
}

TEST(naming, read_write_lock) {
  EXPECT_EQ(rwlock_channel("doc"), "redisson_rwlock:{doc}");
  EXPECT_EQ(rwlock_channel("d{oc}"), "redisson_rwlock:d{oc}");
  EXPECT_EQ(rwlock_timeout_prefix("doc", "c:1"), "{doc}:c:1:rwlock_timeout");
  EXPECT_EQ(rwlock_timeout_prefix("d{oc}", "c:1"), "d{oc}:c:1:rwlock_timeout");
  EXPECT_EQ(rwlock_key_prefix("doc"), "{doc}");
  EXPECT_EQ(rwlock_key_prefix("d{oc}"), "d{oc}");
  // The read-release script rebuilds an owner's timeout keys as
  // <key prefix>:<owner>:rwlock_timeout:<n>; that must be the acquire's <timeout prefix>:<n>.
  for (const char* name : {"doc", "d{oc}", "{doc}"}) {
    EXPECT_EQ(rwlock_key_prefix(name) + ":c:1:rwlock_timeout", rwlock_timeout_prefix(name, "c:1"))
        << name;
  }
}

TEST(naming, fenced_lock) {
  EXPECT_EQ(fenced_token_key("orders"), "redisson_lock_token:{orders}");
  EXPECT_EQ(fenced_token_key("o{r}"), "redisson_lock_token:o{r}");
}

TEST(naming, semaphores) {
  EXPECT_EQ(semaphore_channel("pool"), "redisson_sc:{pool}");
  EXPECT_EQ(semaphore_channel("p{oo}l"), "redisson_sc:p{oo}l");
  EXPECT_EQ(semaphore_timeout_key("pool"), "{pool}:timeout");
  EXPECT_EQ(semaphore_timeout_key("p{oo}l"), "p{oo}l:timeout");
}

TEST(naming, latch_channel_always_adds_braces) {
  EXPECT_EQ(latch_channel("gate"), "redisson_countdownlatch__channel__{gate}");
  // Literally, even around a name that has its own tag (what Redisson subscribes to).
  EXPECT_EQ(latch_channel("g{a}te"), "redisson_countdownlatch__channel__{g{a}te}");
}

// Every key and channel a script touches hashes to the main key's slot, for plain names and
// for names with their own tag.
TEST(naming, derived_names_share_the_main_keys_slot) {
  for (const char* name : {"orders", "app:{orders}", "x{t}y", "{t}"}) {
    const auto slot = slot_of(name);
    EXPECT_EQ(slot_of(lock_channel(name)), slot) << name;
    EXPECT_EQ(slot_of(unlock_latch_key(name, "00ff")), slot) << name;
    EXPECT_EQ(slot_of(fair_queue_key(name)), slot) << name;
    EXPECT_EQ(slot_of(fair_timeout_key(name)), slot) << name;
    EXPECT_EQ(slot_of(fair_waiter_channel(name, "c:1")), slot) << name;
    EXPECT_EQ(slot_of(rwlock_channel(name)), slot) << name;
    EXPECT_EQ(slot_of(rwlock_timeout_prefix(name, "c:1") + ":1"), slot) << name;
    EXPECT_EQ(slot_of(fenced_token_key(name)), slot) << name;
    EXPECT_EQ(slot_of(semaphore_channel(name)), slot) << name;
    EXPECT_EQ(slot_of(semaphore_timeout_key(name)), slot) << name;
  }
  // The latch channel keeps the slot only when the name has no brace of its own.
  EXPECT_EQ(slot_of(latch_channel("gate")), slot_of("gate"));
}

// The Redisson rule tests for '{' only, so a name whose brace makes no tag keeps its whole-key
// slot while its derived names hash whole too, elsewhere; the empty name gets an empty tag.
// Pinned so that a change is deliberate: "fixing" it would part from Java clients.
TEST(naming, a_brace_without_a_tag_does_not_keep_the_slot) {
  EXPECT_NE(slot_of(lock_channel("a{}b")), slot_of("a{}b"));
  EXPECT_NE(slot_of(lock_channel("a{b")), slot_of("a{b"));
  EXPECT_NE(slot_of(lock_channel("")), slot_of(""));  // "...:{}" is an empty tag
  EXPECT_NE(slot_of(latch_channel("g{a}te")), slot_of("g{a}te"));
}
