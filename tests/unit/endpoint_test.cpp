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
  for (const char* bad :
       {"http://h", "redis://", "redis://h:0", "redis://h:70000", "redis://h:x", "redis://h/-1",
        "redis://h/x", "redis://[::1", "redis://a%4@h", "redis://127.0.0.1:", "redis://[::1]:"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const relock::error& e) {
      EXPECT_EQ(e.code(), relock::errc::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find(relock::net::redacted_url(bad)), std::string::npos)
          << e.what();
    }
  }
}

TEST(parse_url, never_shows_a_password_in_its_errors) {
  for (const char* bad : {"redis://:s3cret@127.0.0.1:abc", "redis://app:s3cret@h:",
                          "redis://s3cret@h:0", "redis://app:s3cret@h/x", "redis://:s3cret@[::1",
                          "redis://:pa/s3cret@127.0.0.1:abc", "redis://:pa/s3cret@h/x"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const relock::error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
      EXPECT_NE(what.find("***"), std::string::npos) << what;
      // The detail alone: the code's own words are not repeated at the end.
      EXPECT_FALSE(what.ends_with(": invalid argument")) << what;
    }
  }
}

TEST(redacted_url, hides_exactly_the_password) {
  using relock::net::redacted_url;
  EXPECT_EQ(redacted_url("redis://app:pw@h:1/2"), "redis://app:***@h:1/2");
  EXPECT_EQ(redacted_url("redis://:pw@h"), "redis://:***@h");
  EXPECT_EQ(redacted_url("redis://pw@h"), "redis://***@h");
  EXPECT_EQ(redacted_url("redis://h:1"), "redis://h:1");
  EXPECT_EQ(redacted_url("redis://a:b@c@h"), "redis://a:***@h");
  EXPECT_EQ(redacted_url("redis://:pa/ss@h/1"), "redis://:***@h/1");
}

TEST(parse_url, a_password_may_hold_a_slash_or_an_at) {
  auto ep = parse_url("redis://app:pa/s@w@127.0.0.1:6380/2");
  EXPECT_EQ(ep.user, "app");
  EXPECT_EQ(ep.password, "pa/s@w");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 2);
}
