// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "topology/redirect.hpp"

using relock::topology::parse_redirect;
using relock::topology::redirect;

namespace {

redirect moved(std::uint16_t slot, std::string host, std::uint16_t port) {
  return {redirect::kind::moved, slot, std::move(host), port};
}

redirect ask(std::uint16_t slot, std::string host, std::uint16_t port) {
  return {redirect::kind::ask, slot, std::move(host), port};
}

}  // namespace

TEST(redirect, moved_and_ask) {
  EXPECT_EQ(parse_redirect("MOVED 3999 127.0.0.1:6381"), moved(3999, "127.0.0.1", 6381));
  EXPECT_EQ(parse_redirect("ASK 3999 127.0.0.1:6381"), ask(3999, "127.0.0.1", 6381));
  EXPECT_EQ(parse_redirect("MOVED 12182 127.0.0.1:6463"), moved(12182, "127.0.0.1", 6463));
}

TEST(redirect, slot_bounds) {
  EXPECT_EQ(parse_redirect("MOVED 0 h:1"), moved(0, "h", 1));
  EXPECT_EQ(parse_redirect("MOVED 16383 h:1"), moved(16383, "h", 1));
  EXPECT_EQ(parse_redirect("MOVED 16384 h:1"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 99999999999 h:1"), std::nullopt);
}

TEST(redirect, hosts) {
  // IPv6 without brackets, as Redis writes it: the port follows the last colon.
  EXPECT_EQ(parse_redirect("MOVED 1 ::1:7000"), moved(1, "::1", 7000));
  EXPECT_EQ(parse_redirect("ASK 2 fe80::1:2:7001"), ask(2, "fe80::1:2", 7001));
  // A hostname (cluster-preferred-endpoint-type hostname, Redis 7).
  EXPECT_EQ(parse_redirect("MOVED 5 redis-2.example.internal:6379"),
            moved(5, "redis-2.example.internal", 6379));
  // Unknown endpoint: same host as the current connection, kept empty for the caller.
  EXPECT_EQ(parse_redirect("MOVED 3999 :7000"), moved(3999, "", 7000));
}

TEST(redirect, ports) {
  EXPECT_EQ(parse_redirect("MOVED 1 h:65535"), moved(1, "h", 65535));
  EXPECT_EQ(parse_redirect("MOVED 1 h:65536"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:0"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:-1"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:+1"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:80x"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 ::1"), moved(1, ":", 1));  // read literally: host ":", port 1
}

TEST(redirect, garbage_is_nullopt) {
  const char* rows[] = {
      "",
      "MOVED",
      "MOVED ",
      "MOVED 3999",
      "MOVED 3999 ",
      "MOVED  3999 h:1",
      "MOVED 3999  h:1",
      "MOVED 3999 h:1 ",
      "MOVED 3999 h:1 extra",
      "MOVED -1 h:1",
      "MOVED +1 h:1",
      "MOVED x h:1",
      "MOVED 39x9 h:1",
      "moved 3999 h:1",   // Redis writes the word in capitals
      "-MOVED 3999 h:1",  // the RESP type byte is not part of the text
      "ASKING 3999 h:1",
      "MOVE 3999 h:1",
      "NOSCRIPT No matching script. Please use EVAL.",
      "ERR unknown command",
      "CROSSSLOT Keys in request don't hash to the same slot",
      "TRYAGAIN Multiple keys request during rehashing of slot",
  };
  for (const char* text : rows) EXPECT_EQ(parse_redirect(text), std::nullopt) << '"' << text << '"';
}

TEST(redirect, embedded_nul_is_garbage) {
  using namespace std::string_view_literals;
  EXPECT_EQ(parse_redirect("MOVED 1\0 h:1"sv), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED 1 h:1\0"sv), std::nullopt);
}

TEST(redirect, reads_only_its_view) {
  // A view into a longer buffer: nothing past its end is read.
  std::string buffer = "MOVED 7 10.0.0.2:6381999";
  auto r = parse_redirect(std::string_view(buffer).substr(0, buffer.size() - 3));
  EXPECT_EQ(r, moved(7, "10.0.0.2", 6381));
}
