// SPDX-License-Identifier: Apache-2.0
// connection::withdraw without a server: a connection that has not come up holds its requests
// queued, never written, which is the case the executor takes back when a slot moves.
#include <gtest/gtest.h>

#include <chrono>
#include <system_error>
#include <utility>
#include <vector>

#include <asio/io_context.hpp>
#include <relock/errors.hpp>

#include "net/connection.hpp"

using namespace std::chrono_literals;
namespace net = relock::net;

TEST(connection_withdraw, takes_back_the_queued_requests_its_predicate_picks_in_queue_order) {
  asio::io_context io;
  net::connection_options o;
  // Never run: the connection stays down (connecting, then backing off), its queue unwritten.
  o.target.host = "127.0.0.1";
  o.target.port = 1;
  auto c = net::connection::create(io, o);
  c->start();
  std::vector<std::pair<std::uint32_t, std::error_code>> heard;
  for (std::uint32_t route : {0U, 1U, 2U, 3U, 4U}) {
    c->send(
        relock::resp::request{"PING"}, net::clock::now() + 60s,
        [&heard, route](std::error_code ec, relock::net::reply_span) {
          heard.emplace_back(route, ec);
        },
        /*key_hash=*/route + 100, route);
  }
  ASSERT_TRUE(heard.empty());
  ASSERT_TRUE(c->carries(102));

  // Route 0 means "stays": the predicate is never asked about it.
  std::vector<std::uint32_t> asked;
  const auto taken = c->withdraw([&](std::uint32_t route) {
    asked.push_back(route);
    return route % 2 == 0;
  });
  EXPECT_EQ(taken, 2U);
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{1, 2, 3, 4}));
  ASSERT_EQ(heard.size(), 2U);
  EXPECT_EQ(heard[0], std::pair(2U, net::withdrawn()));
  EXPECT_EQ(heard[1], std::pair(4U, net::withdrawn()));
  EXPECT_NE(net::withdrawn(), make_error_code(relock::errc::connection));
  EXPECT_EQ(c->outstanding(), 3U);
  // A request taken back no longer holds its key to this socket.
  EXPECT_FALSE(c->carries(102));
  EXPECT_TRUE(c->carries(101));

  heard.clear();
  c->close();  // the rest fail as on any close, not as withdrawn
  io.poll();
  ASSERT_EQ(heard.size(), 3U);
  for (const auto& [route, ec] : heard) EXPECT_EQ(ec, relock::errc::cancelled) << route;
}
