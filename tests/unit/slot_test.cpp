// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <functional>
#include <string>

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

// Keys whose braces do not pair up neatly, each slot checked with CLUSTER KEYSLOT on a node of a
// redis-server 7.0.15 cluster. The server pairs the first '{' with the first '}' after it.
TEST(slot, brace_quirks_as_the_server_hashes_them) {
  struct row {
    const char* key;
    std::uint16_t slot;
    const char* hashed;
  };
  const row rows[] = {
      {"a{}b", 13694, "a{}b"},  // empty tag: the whole key
      {"a{b", 13340, "a{b"},    // no '}': the whole key
      {"a{b}c}", 3300, "b"},    // the first '}' after the '{' closes it
      {"a{b}}", 3300, "b"},
      {"{a}}", 15495, "a"},
      {"a{{b}", 6215, "{b"},  // a second '{' is text inside the tag
      {"{{}}", 4092, "{"},
      {"{}{x}", 3257, "{}{x}"},       // empty first tag: the whole key, no second chance
      {"a}b{}c}", 10891, "a}b{}c}"},  // empty tag after a stray '}'
      {"a}b{c}", 7365, "c"},          // a '}' before the '{' is text: tag "c" (not Redisson)
      {"}{x}", 16287, "x"},           // (not Redisson)
      {"x}{y}z", 12222, "y"},         // (not Redisson)
      {"}}{a}", 15495, "a"},          // (not Redisson)
      {"a}b{c}d{e}", 7365, "c"},      // (not Redisson)
      {"}{}", 8640, "}{}"},
      {"}", 12090, "}"},
      {"{", 4092, "{"},
      {"b", 3300, "b"},  // the tags above, hashed alone
      {"c", 7365, "c"},
      {"x", 16287, "x"},
      {"y", 12222, "y"},
      {"{b", 6215, "{b"},
      {"redisson_lock__channel:a}b{c}", 7365, "c"},
      {"redisson_lock__channel:{a}b{c}}", 15495, "a"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(hash_tag(r.key), r.hashed) << '"' << r.key << '"';
    EXPECT_EQ(slot_of(r.key), r.slot) << '"' << r.key << '"';
  }
}

namespace {

// Redisson's rule, modelled from ClusterConnectionManager.calcSlot(String) and calcSlot(byte[])
// (redisson/redisson, 3.13.4 to 4.x): the first '{' and the first '}' anywhere in the key; the
// text between them when the '}' comes after the '{' with something between, else the whole key.
std::string_view redisson_hash_tag(std::string_view key) {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}');
  if (close == std::string_view::npos || open + 1 >= close) return key;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace

// relock follows the server, so a script goes straight to the node that takes it; Redisson
// parts from it exactly when a '}' precedes the first '{' and a non-empty tag follows (it then
// hashes the whole key, is answered MOVED and lands on the same node). Checked on every key of
// up to 7 characters over {a, b, '{', '}'}.
TEST(slot, where_redisson_hashes_differently) {
  EXPECT_EQ(redisson_hash_tag("a}b{c}"), "a}b{c}");
  EXPECT_EQ(hash_tag("a}b{c}"), "c");
  for (const char* same : {"a{}b", "a{b", "a{b}c}", "{}{x}", "a}b{}c}", "{a}}", "a{{b}", "x"}) {
    EXPECT_EQ(redisson_hash_tag(same), hash_tag(same)) << same;
  }

  const std::string alphabet = "ab{}";
  std::size_t differ = 0;
  std::string key;
  std::function<void()> each = [&] {
    const auto open = key.find('{');
    const bool stray_close = open != std::string::npos && key.find('}') < open;
    const bool redis_has_tag = hash_tag(key).size() != key.size();
    const bool expect_same = !(stray_close && redis_has_tag);
    EXPECT_EQ(redisson_hash_tag(key) == hash_tag(key), expect_same) << key;
    differ += expect_same ? 0 : 1;
    if (key.size() == 7) return;
    for (char c : alphabet) {
      key.push_back(c);
      each();
      key.pop_back();
    }
  };
  each();
  EXPECT_GT(differ, 0u);
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
