#include <gtest/gtest.h>

#include "exec/sha1.hpp"

using relock::exec::sha1_hex;

// FIPS 180-4 example vectors.
TEST(sha1, reference_vectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1'000'000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(sha1, lengths_around_the_padding_boundary) {
  // 55, 56 and 64 bytes take the one- and two-block padding paths.
  EXPECT_EQ(sha1_hex(std::string(55, 'x')).size(), 40u);
  EXPECT_NE(sha1_hex(std::string(55, 'x')), sha1_hex(std::string(56, 'x')));
  EXPECT_NE(sha1_hex(std::string(63, 'x')), sha1_hex(std::string(64, 'x')));
}
