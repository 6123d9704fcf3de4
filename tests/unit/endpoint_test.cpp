#include <gtest/gtest.h>

#include <relock/errors.hpp>

#include "net/endpoint.hpp"

using relock::net::parse_url;

TEST(parse_url, host_port_and_defaults) {
  auto ep = parse_url("redis://example.org");
  EXPECT_EQ(ep.host, "example.org");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_TRUE(ep.user.empty());
  EXPECT_TRUE(ep.password.empty());
  EXPECT_EQ(parse_url("redis://10.1.2.3:7001").port, 7001);
}

TEST(parse_url, credentials_and_database) {
  auto ep = parse_url("redis://alice:s%40cret@127.0.0.1:6380/3");
  EXPECT_EQ(ep.user, "alice");
  EXPECT_EQ(ep.password, "s@cret");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 3);
  auto password_only = parse_url("redis://:pw@h");
  EXPECT_EQ(password_only.user, "");
  EXPECT_EQ(password_only.password, "pw");
  EXPECT_EQ(parse_url("redis://lonely@h").password, "lonely");
}

TEST(parse_url, ipv6) {
  auto ep = parse_url("redis://[::1]:7000");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.address(), "[::1]:7000");
}

TEST(parse_url, refuses_bad_urls_with_a_reason) {
  for (const char* bad : {"http://h", "redis://", "redis://h:0", "redis://h:70000", "redis://h:x",
                          "redis://h/-1", "redis://h/x", "redis://[::1", "redis://a%4@h"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const relock::error& e) {
      EXPECT_EQ(e.code(), relock::errc::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}
