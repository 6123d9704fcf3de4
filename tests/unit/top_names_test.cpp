// SPDX-License-Identifier: Apache-2.0
// How relock top reads a key found by SCAN back to its object (tools/relock/top_names.*, pure
// code compiled into this target by tests/CMakeLists.txt): auxiliary keys name their object,
// other keys are objects of their own. tests/cli/cli_top_test.cpp runs the real binary.
#include <gtest/gtest.h>

#include "top_names.hpp"

TEST(top_names, auxiliary_keys_name_their_object) {
  using relock_cli::object_of;
  const std::string owner = "6c5f1e0a-0000-4000-8000-000000000001:77";
  const std::string latch = std::string(32, 'a');
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"redisson_lock_queue:{orders}", "orders"},
           {"redisson_lock_timeout:{orders}", "orders"},
           {"redisson_lock_token:{orders}", "orders"},
           {"redisson_delay_queue_timeout:{jobs}", "jobs"},
           {"redisson_delay_queue:{jobs}", "jobs"},
           {"redisson_unlock_latch:{orders}:" + latch, "orders"},
           {"{orders}:" + owner + ":rwlock_timeout:2", "orders"},
           {"{pool}:timeout", "pool"},
           // A name with a tag of its own keeps it, unwrapped.
           {"redisson_lock_queue:app:{orders}", "app:{orders}"},
           {"app:{orders}:" + owner + ":rwlock_timeout:1", "app:{orders}"},
           {"app:{pool}:timeout", "app:{pool}"},
       }) {
    const auto found = object_of(key);
    EXPECT_TRUE(found.auxiliary) << key;
    EXPECT_EQ(found.name, name) << key;
  }
}

TEST(top_names, other_keys_are_objects_of_their_own) {
  using relock_cli::object_of;
  // Not what data-layout §1.2 derives: no braces where a derived name has them, a latch id that
  // is no 32 hex digits, a hold number that is no number.
  for (const std::string key : {"orders", "session:timeout", "redisson_lock_queue:plain",
                                "redisson_unlock_latch:{x}:not-a-request-id",
                                "{x}:a:b:rwlock_timeout:two", "redisson_lock_queue:"}) {
    const auto found = object_of(key);
    EXPECT_FALSE(found.auxiliary) << key;
    EXPECT_EQ(found.name, key);
  }
  EXPECT_EQ(relock_cli::prefixed("redisson_lock__channel", "orders"),
            "redisson_lock__channel:{orders}");
  EXPECT_EQ(relock_cli::prefixed("redisson_lock__channel", "app:{orders}"),
            "redisson_lock__channel:app:{orders}");
}
