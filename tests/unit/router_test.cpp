// SPDX-License-Identifier: Apache-2.0
// When the cluster router wants a fresh map: soon (every min_gap) while its map is suspect or
// leaves slots without a master, else every period. The map's completeness is kept as the map
// changes rather than scanned on every send.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "support/reply_builders.hpp"
#include "topology/router.hpp"

using namespace std::chrono_literals;
using relock::resp::reply;
using relock::topology::node;
using relock::topology::router;
using relock::topology::slot_map;

namespace router_test {  // keeps this file's names apart in a unity build
namespace {

using relock::test::arr;
using relock::test::num;
using relock::test::str;

// CLUSTER SLOTS with one master per range: [first, last, [host, port, id, metadata]].
reply slots(std::vector<std::tuple<int, int, int>> ranges) {
  std::vector<reply> out;
  for (auto [first, last, port] : ranges) {
    out.push_back(
        arr({num(first), num(last),
             arr({str("127.0.0.1"), num(port), str("id" + std::to_string(port)), arr({})})}));
  }
  return arr(std::move(out));
}

slot_map map_of(std::vector<std::tuple<int, int, int>> ranges) {
  auto map = slot_map::from_slots(slots(std::move(ranges)), "127.0.0.1");
  EXPECT_TRUE(map);
  return *map;
}

const router::time_point t0{std::chrono::hours(1)};

}  // namespace

TEST(router, a_map_with_slots_unserved_is_refreshed_soon_a_whole_one_every_period) {
  router r(map_of({{0, 5460, 7101}, {5461, 10922, 7102}}));  // 10923-16383: nobody
  r.refreshing(t0);
  EXPECT_FALSE(r.refresh_due(t0 + 50ms));
  EXPECT_TRUE(r.refresh_due(t0 + router::min_gap));

  r.refreshed(map_of({{0, 5460, 7101}, {5461, 10922, 7102}, {10923, 16383, 7103}}),
              t0 + router::min_gap);
  EXPECT_FALSE(r.refresh_due(t0 + router::min_gap + 5s)) << "whole now: the period decides";
  EXPECT_TRUE(r.refresh_due(t0 + router::min_gap + router::period));

  r.refreshed(map_of({{0, 16000, 7101}}), t0 + 20s);
  EXPECT_TRUE(r.refresh_due(t0 + 20s + router::min_gap)) << "a refresh that left a gap";
}

TEST(router, a_moved_slot_makes_the_map_suspect) {
  router r(map_of({{0, 16383, 7101}}));
  r.refreshing(t0);
  EXPECT_FALSE(r.refresh_due(t0 + 1s));
  r.moved(42, node{"127.0.0.1", 7102});
  EXPECT_TRUE(r.refresh_due(t0 + router::min_gap));
  ASSERT_TRUE(r.node_for("anything").has_value());
}

}  // namespace router_test
