#include <gtest/gtest.h>

#include "objects/naming.hpp"

using namespace relock::objects;

TEST(naming, prefixed_and_suffixed_keep_the_hash_tag) {
  EXPECT_EQ(prefixed("redisson_lock__channel", "mylock"), "redisson_lock__channel:{mylock}");
  EXPECT_EQ(prefixed("redisson_lock__channel", "my{x}lock"), "redisson_lock__channel:my{x}lock");
  EXPECT_EQ(suffixed("a", "timeout"), "{a}:timeout");
  EXPECT_EQ(suffixed("{a}b", "timeout"), "{a}b:timeout");
}

TEST(naming, lock_names_of_the_contract) {
  EXPECT_EQ(lock_channel("orders"), "redisson_lock__channel:{orders}");
  EXPECT_EQ(unlock_latch_key("orders", "0123456789abcdef0123456789abcdef"),
            "redisson_unlock_latch:{orders}:0123456789abcdef0123456789abcdef");
}
