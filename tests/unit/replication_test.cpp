// SPDX-License-Identifier: Apache-2.0
// Replica sync's decisions and what Sentinel and INFO say, read without a server.
#include <gtest/gtest.h>

#include "master_watch.hpp"
#include "topology/replication.hpp"
#include "topology/sentinel_view.hpp"

using relock::replica_sync_mode;
using relock::resp::reply;
using relock::topology::node;
using relock::topology::replication;
using relock::topology::sentinel_view;
using namespace std::chrono_literals;

namespace {

reply strings(std::vector<std::string> words) {
  std::vector<reply> out;
  for (auto& w : words) out.push_back(reply::make_string(std::move(w)));
  return reply::make_array(std::move(out));
}

}  // namespace

TEST(replication, wait_is_sized_by_the_mode_and_the_known_replicas) {
  EXPECT_EQ((replication{replica_sync_mode::auto_detect, 0}.replicas_to_wait()), 0);
  EXPECT_EQ((replication{replica_sync_mode::auto_detect, 2}.replicas_to_wait()), 2);
  EXPECT_EQ((replication{replica_sync_mode::on, 0}.replicas_to_wait()), 1);
  EXPECT_EQ((replication{replica_sync_mode::on, 3}.replicas_to_wait()), 3);
  EXPECT_EQ((replication{replica_sync_mode::off, 3}.replicas_to_wait()), 0);
  EXPECT_FALSE(replication::synced(0));
  EXPECT_TRUE(replication::synced(1));
}

TEST(sentinel_view, reads_the_master_and_counts_replicas_that_can_take_over) {
  std::string why;
  EXPECT_EQ(sentinel_view::read_master(strings({"10.0.0.5", "6380"}), &why),
            (node{"10.0.0.5", 6380}));
  EXPECT_EQ(sentinel_view::read_master(reply::make_nil(), &why), std::nullopt);
  EXPECT_NE(why.find("knows no master"), std::string::npos);
  EXPECT_EQ(sentinel_view::read_master(strings({"h", "0"}), &why), std::nullopt);
  EXPECT_EQ(sentinel_view::read_master(reply::make_error("ERR x"), &why), std::nullopt);
  EXPECT_EQ(why, "ERR x");

  auto replicas = reply::make_array({
      strings({"name", "a:1", "flags", "slave"}),
      strings({"name", "b:1", "flags", "s_down,slave"}),
      strings({"name", "c:1", "flags", "slave,disconnected"}),
      strings({"name", "d:1", "flags", "slave"}),
      // The old master after a switchover: listed, not yet converted.
      strings({"name", "e:1", "flags", "slave", "role-reported", "master"}),
      strings({"name", "f:1", "flags", "slave", "role-reported", "slave"}),
      // The same just after +switch-master, before Sentinel's first INFO of it: the role is
      // Sentinel's default, the master unknown.
      strings({"name", "g:1", "flags", "slave", "role-reported", "slave", "master-link-status",
               "err", "master-host", "?"}),
      // A replica still syncing: it will acknowledge once it has caught up.
      strings({"name", "h:1", "flags", "slave", "role-reported", "slave", "master-link-status",
               "err", "master-host", "127.0.0.1"}),
  });
  EXPECT_EQ(sentinel_view::count_replicas(replicas), 4);
  EXPECT_EQ(sentinel_view::count_replicas(reply::make_array({})), 0);
  EXPECT_EQ(sentinel_view::count_replicas(reply::make_error("ERR")), std::nullopt);
}

TEST(sentinel_view, hears_its_master_switch_and_its_replicas_news_only) {
  sentinel_view view("orders", node{"10.0.0.1", 6379}, 1);
  auto news = view.heard("+switch-master", "orders 10.0.0.1 6379 10.0.0.2 6380");
  EXPECT_EQ(news.new_master, (node{"10.0.0.2", 6380}));
  EXPECT_TRUE(news.ask);
  EXPECT_FALSE(view.heard("+switch-master", "other 10.0.0.1 6379 10.0.0.2 6380").ask);
  EXPECT_TRUE(view.heard("+sdown", "slave 10.0.0.2:6380 10.0.0.2 6380 @ orders 10.0.0.1 6379").ask);
  EXPECT_FALSE(view.heard("-sdown", "slave 10.0.0.9:6380 10.0.0.9 6380 @ other 10.0.0.8 6379").ask);
  EXPECT_TRUE(view.heard("+sdown", "master orders 10.0.0.1 6379").ask);
  EXPECT_FALSE(view.heard("+switch-master", "garbage").new_master.has_value());
}

TEST(sentinel_view, asks_every_period_and_soon_after_trouble) {
  const sentinel_view::time_point t0{std::chrono::hours(1)};
  sentinel_view view("m", node{"h", 1}, 0, 1s);
  view.asking(t0);
  EXPECT_FALSE(view.ask_due(t0 + 999ms));
  EXPECT_TRUE(view.ask_due(t0 + 1s));
  view.trouble();
  EXPECT_EQ(view.next_ask(), t0 + sentinel_view::min_gap);
  view.asking(t0 + 2s);
  EXPECT_EQ(view.next_ask(), t0 + 3s);
}

TEST(master_watch, reads_online_and_caught_up_replicas_from_info) {
  const std::string info =
      "# Replication\r\nrole:master\r\nconnected_slaves:3\r\n"
      "slave0:ip=10.0.0.2,port=6380,state=online,offset=1200,lag=0\r\n"
      "slave1:ip=10.0.0.3,port=6380,state=online,offset=1100,lag=1\r\n"
      "slave2:ip=10.0.0.4,port=6380,state=wait_bgsave,offset=0,lag=0\r\n"
      "master_failover_state:no-failover\r\nmaster_repl_offset:1200\r\n";
  EXPECT_EQ(relock::detail::online_replicas(info), 2);
  EXPECT_EQ(relock::detail::caught_up_replicas(info), 1);
  EXPECT_EQ(relock::detail::online_replicas("# Replication\r\nrole:master\r\n"), 0);
}
