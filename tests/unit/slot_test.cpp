#include <gtest/gtest.h>

#include "topology/slot.hpp"

using namespace relock::topology;

// The CRC16 check value of the XMODEM variant, given in the Redis Cluster specification.
TEST(slot, crc16_reference_value) { EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3); }

TEST(slot, crc16_of_nothing_is_the_initial_value) { EXPECT_EQ(crc16_xmodem(""), 0); }

// Each value was checked with CLUSTER KEYSLOT on redis-server 7.0.15 started with
// --cluster-enabled yes (a standalone server answers "ERR This instance has cluster support
// disabled").
TEST(slot, known_slots) {
  struct row {
    const char* key;
    std::uint16_t slot;
  };
  const row rows[] = {
      {"foo", 12182},
      {"bar", 5061},
      {"zap", 6469},
      {"", 0},
      {"a", 15495},
      {"hello", 866},
      {"Hello, World", 13869},
      {"user:1000", 1649},
      {"123456789", 12739},  // 0x31C3 % 16384
      {"mylock", 1711},
      {"orders", 105},
      {"\xc3\xa9", 10180},  // "é" in UTF-8: bytes, not characters, are hashed
      {"{user1000}.following", 3443},
      {"{user1000}.followers", 3443},
      {"foo{}{bar}", 8363},
      {"foo{{bar}}zap", 4015},
      {"foo{bar}{zap}", 5061},
      {"{}", 15257},
      {"}{", 12793},
      {"a{}", 6082},
      {"{}{a}", 13650},
      {"{a}{}", 15495},
      {"redisson_lock__channel:{mylock}", 1711},
  };
  for (const auto& r : rows) EXPECT_EQ(slot_of(r.key), r.slot) << '"' << r.key << '"';
}

// The spec's hash tag examples, plus the edges around them.
TEST(slot, hash_tags) {
  EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
  EXPECT_EQ(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");  // the first tag is empty: the whole key
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");     // from the first '{' to the next '}'
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");      // only the first tag counts
  EXPECT_EQ(hash_tag("{}{a}"), "{}{a}");            // no second chance after an empty tag
  EXPECT_EQ(hash_tag("no-tag"), "no-tag");
  EXPECT_EQ(hash_tag("open{only"), "open{only");
  EXPECT_EQ(hash_tag("close}{"), "close}{");
  EXPECT_EQ(hash_tag("}x{y}"), "y");  // a '}' before the first '{' is plain text
  EXPECT_EQ(hash_tag(""), "");
}

TEST(slot, tag_is_a_view_into_the_key) {
  std::string_view key = "lock{orders}:x";
  auto tag = hash_tag(key);
  EXPECT_EQ(tag.data(), key.data() + 5);
  EXPECT_EQ(tag.size(), 6u);
}

TEST(slot, derived_names_land_in_the_main_keys_slot) {
  EXPECT_EQ(slot_of("redisson_lock__channel:{orders}"), slot_of("orders"));
  EXPECT_EQ(slot_of("{orders}:timeout"), slot_of("orders"));
  EXPECT_EQ(slot_of("redisson_lock__channel:my{x}lock"), slot_of("my{x}lock"));
}

TEST(slot, every_slot_is_in_range) {
  for (int i = 0; i < 100000; ++i) EXPECT_LT(slot_of("key:" + std::to_string(i)), slot_count);
}
