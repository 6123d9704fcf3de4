#include <gtest/gtest.h>

#include "topology/slot.hpp"

using namespace relock::topology;

// Values from the Redis Cluster specification and from CLUSTER KEYSLOT on Redis 7.
TEST(slot, crc16_reference_value) { EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3); }

TEST(slot, known_slots) {
  EXPECT_EQ(slot_of("foo"), 12182);
  EXPECT_EQ(slot_of("bar"), 5061);
  EXPECT_EQ(slot_of(""), 0);
}

TEST(slot, hash_tags) {
  EXPECT_EQ(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");  // empty tag: the whole key
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(hash_tag("no-tag"), "no-tag");
  EXPECT_EQ(hash_tag("open{only"), "open{only");
  // Every derived name of a lock lands in its slot.
  EXPECT_EQ(slot_of("redisson_lock__channel:{orders}"), slot_of("orders"));
}
