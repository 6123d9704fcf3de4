// SPDX-License-Identifier: Apache-2.0
// Which server INFO server names (lock_info::server, relock status), read without a server.
#include <gtest/gtest.h>

#include "server_name.hpp"

using relock::detail::server_name_of;

TEST(server_name, redis_is_named_by_its_redis_version) {
  EXPECT_EQ(server_name_of("# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n"),
            "redis 7.0.15");
}

TEST(server_name, valkey_names_itself_before_the_redis_it_is_compatible_with) {
  EXPECT_EQ(server_name_of("# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
                           "valkey_version:9.1.2\r\nvalkey_release_stage:ga\r\n"),
            "valkey 9.1.2");
}

TEST(server_name, text_naming_no_version_is_empty) {
  EXPECT_EQ(server_name_of(""), "");
  EXPECT_EQ(server_name_of("# Server\r\nredis_versionx:1\r\nos:Linux\r\n"), "");
}
