// SPDX-License-Identifier: Apache-2.0
// Reading one field of INFO's text (info_text.hpp), without a server.
#include <gtest/gtest.h>

#include "info_text.hpp"

using relock::detail::info_field;

namespace {
constexpr std::string_view info =
    "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Replication\r\nrole:master\r\n"
    "role_extra:x\r\nmaster_host:10.0.0.1";
}  // namespace

TEST(info_text, a_field_is_read_from_its_own_line_without_the_line_end) {
  EXPECT_EQ(info_field(info, "redis_version"), "7.0.15");
  EXPECT_EQ(info_field(info, "role"), "master");
  EXPECT_EQ(info_field(info, "master_host"), "10.0.0.1");  // last line, no CRLF
}

TEST(info_text, a_name_matches_only_a_whole_name_at_a_line_start) {
  EXPECT_EQ(info_field(info, "id"), "");   // the tail of run_id
  EXPECT_EQ(info_field(info, "rol"), "");  // a prefix of role
  EXPECT_EQ(info_field(info, "role_extra"), "x");
  EXPECT_EQ(info_field(info, "Server"), "");  // a section header is no field
  EXPECT_EQ(info_field("", "role"), "");
}
