// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "exec/sha1.hpp"

#include <string>

using relock::exec::sha1_hex;

// FIPS 180-4 example vectors (NIST "Cryptographic Algorithm Validation" SHA-1 examples).
TEST(sha1, reference_vectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // 448 bits: fills a block so exactly that the length needs a second one.
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1'000'000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  EXPECT_EQ(sha1_hex("The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

// Lengths around the padding boundary take the one- and two-block tail paths (55 fits with
// its 0x80 and length, 56 does not; 64 and 128 are whole blocks). Values from sha1sum.
TEST(sha1, lengths_around_the_padding_boundary) {
  struct row {
    std::size_t length;
    const char* digest;
  };
  const row rows[] = {
      {55, "cef734ba81a024479e09eb5a75b6ddae62e6abf1"},
      {56, "901305367c259952f4e7af8323f480d59f81335b"},
      {63, "0ddc4e0cccd9a12850deb5abb0853a4425559fec"},
      {64, "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163"},
      {65, "78c741ddc482e4cdf8c474a0876347a0905b6233"},
      {119, "4300320394f7ee239bcdce7d3b8bcee173a0cd5c"},
      {120, "ceb2821639c4b6dcb10bce0e522ca2e608ce056d"},
      {128, "150fa3fbdc899bd0b8f95a9fb6027f564d953762"},
  };
  for (const auto& r : rows) EXPECT_EQ(sha1_hex(std::string(r.length, 'x')), r.digest) << r.length;
}

// Bytes above 0x7f and NUL are data like any other (signed char must not leak in).
TEST(sha1, binary_input) {
  using namespace std::string_view_literals;
  EXPECT_EQ(sha1_hex("\x00\xff\x80\x7f"sv), "20e828176973e578f91799f8cf0f41514b3355e9");
}

// What EVALSHA needs: the digest Redis itself gives the script. Checked with SCRIPT LOAD on
// redis-server 7.0.15 (the newline at the end is part of the script and of its digest).
TEST(sha1, matches_script_load) {
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_EQ(sha1_hex("return redis.call('GET', KEYS[1])"),
            "d3c21d0c2b9ca22f82737626a27bcaf5d288f99f");
  const char* acquire =
      "if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 "
      "then\n"
      "  redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"
      "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
      "  return nil\n"
      "end\n"
      "return redis.call('pttl', KEYS[1])\n";
  EXPECT_EQ(sha1_hex(acquire), "457424f39c0e88d00ed7fb050ed70f982d3d0db0");
}

TEST(sha1, always_40_lowercase_hex_digits) {
  for (std::size_t n = 0; n < 200; ++n) {
    auto digest = sha1_hex(std::string(n, static_cast<char>(n)));
    ASSERT_EQ(digest.size(), 40u);
    for (char c : digest) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << c;
  }
}
