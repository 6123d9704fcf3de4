// SPDX-License-Identifier: Apache-2.0
// Least privilege through Sentinel: the data nodes' user with exactly the README's one-server
// block, the sentinels' user with exactly its sentinel block (both read from README.md, so they
// cannot drift), every kind, a switchover followed, and what a sentinel user without its rules
// gets. The users are made on every node and sentinel and removed again, so the shared set is
// left as found.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>
#include <relock/errors.hpp>

#include "support/command_stats.hpp"
#include "support/error_of.hpp"
#include "support/every_kind.hpp"
#include "support/raw_client.hpp"
#include "support/readme_blocks.hpp"
#include "support/sentinel_set.hpp"
#include "support/server_state.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;

namespace relock::test {
namespace {

using steady = std::chrono::steady_clock;

const std::string data_block = readme_acl_rules(0);
const std::string sentinel_block = readme_acl_rules(2);

sentinel_set& set() { return shared_sentinel_set(); }

// `user` with password "<user>-pw" and exactly `rules`.
void set_user(raw_client& on, const std::string& user, const std::string& rules) {
  relock::test::set_acl_user(on, user, user + "-pw", rules);
}

// `app` with `data_rules` on both data nodes, `watcher` with `sentinel_rules` on every sentinel.
class acl_users {
 public:
  acl_users(const std::string& data_rules, const std::string& sentinel_rules) {
    for (auto port : set().data_ports()) {
      auto raw = set().client(port);
      set_user(raw, "app", data_rules);
    }
    for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
      auto raw = set().sentinel(i);
      set_user(raw, "watcher", sentinel_rules);
    }
  }
  ~acl_users() {
    auto remove = [](raw_client raw, const std::string& user) {
      raw.command({"ACL", "DELUSER", user});
    };
    try {
      for (auto port : set().data_ports()) remove(set().client(port), "app");
      for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
        remove(set().sentinel(i), "watcher");
      }
    } catch (const std::exception& e) {
      std::cerr << "ACL DELUSER: " << e.what() << "\n";
    }
  }
  acl_users(const acl_users&) = delete;
  acl_users& operator=(const acl_users&) = delete;
};

relock::config as_app() {
  relock::config c;
  c.url = set().url();
  c.url.insert(c.url.find("://") + 3, "app:app-pw@");
  c.sentinel_user = "watcher";
  c.sentinel_password = "watcher-pw";
  c.watchdog_lease = 3s;
  c.log = [](log_level level, std::string_view text) {
    if (level >= log_level::warning) std::cerr << "relock: " << text << "\n";
  };
  return c;
}

// Stops the takes of `source` when it goes out of scope: a take still waiting after a failed
// assertion ends, instead of holding up its future's destructor for ever.
struct stop_at_exit {
  std::stop_source& source;
  ~stop_at_exit() { source.request_stop(); }
};

std::string stamp() {
  return std::to_string(steady::now().time_since_epoch().count() % 1'000'000'000);
}

// The sentinel events a client listens to (src/topology/sentinel_view.cpp), all on one
// SUBSCRIBE: a sentinel refuses the whole of it when the rules leave out any of them.
constexpr long long sentinel_events = 6;

// The channels the sentinels' user has subscribed, over every sentinel (CLIENT LIST's sub=).
long long watcher_subscriptions() {
  long long n = 0;
  for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
    const std::string clients = set().sentinel(i).command({"CLIENT", "LIST"}).str;
    std::size_t line_start = 0;
    while (line_start < clients.size()) {
      auto line_end = clients.find('\n', line_start);
      if (line_end == std::string::npos) line_end = clients.size();
      const std::string line = clients.substr(line_start, line_end - line_start);
      line_start = line_end + 1;
      if (line.find(" user=watcher ") == std::string::npos) continue;
      const auto sub = line.find(" sub=");
      if (sub != std::string::npos) n += std::stoll(line.substr(sub + 5));
    }
  }
  return n;
}

// Every sentinel lists the replica as one that acknowledges writes (flags "slave" alone, and
// it says so itself), as relock counts them to size WAIT.
bool every_sentinel_counts_the_replica() {
  for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
    const auto replicas =
        set().sentinel(i).command({"SENTINEL", "REPLICAS", set().options().master_name});
    if (replicas.elements.size() != 1) return false;
    const auto& entry = replicas.elements.front();
    for (std::size_t f = 0; f + 1 < entry.elements.size(); f += 2) {
      const auto& field = entry.elements[f].str;
      const auto& value = entry.elements[f + 1].str;
      if ((field == "flags" || field == "role-reported") && value != "slave") return false;
    }
  }
  return true;
}

class sentinel_acl : public ::testing::Test {
 protected:
  void SetUp() override {
    set().restore();
    ASSERT_NE(data_block.find("+evalsha"), std::string::npos)
        << "README one-server block not found: " << data_block;
    ASSERT_NE(sentinel_block.find("+sentinel|"), std::string::npos)
        << "README sentinel block not found: " << sentinel_block;
  }
  void TearDown() override { set().restore(); }
};

TEST_F(sentinel_acl, the_readmes_blocks_are_enough_for_every_kind) {
  acl_users users(data_block, sentinel_block);
  relock::client client(as_app()), other(as_app());
  auto raw = set().client(set().master_port());
  const std::string run = stamp();
  auto name = [&](const std::string& kind) { return "app:" + kind + "-" + run; };
  auto subscribers = [&](const std::string& channel) {
    return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
  };

  // Every event relock listens to on a sentinel, or a failover is only found by asking.
  EXPECT_TRUE(wait_until([] { return watcher_subscriptions() == 2 * sentinel_events; }, 5s))
      << "the sentinel events subscribed: " << watcher_subscriptions();

  auto lock = client.lock(name("lock"));
  lock.lock();
  auto waited = std::async(std::launch::async, [&] {
    auto l = other.lock(name("lock"));
    const bool got = l.try_lock(10s);
    if (got) l.unlock();
    return got;
  });
  ASSERT_TRUE(wait_until(
      [&] { return subscribers("redisson_lock__channel:{" + name("lock") + "}") == 1; }, 5s));
  lock.unlock();
  EXPECT_TRUE(waited.get()) << "the waiter was not woken";

  relock::test::take_and_give_back_each_kind(client, other, name);

  auto latch = client.count_down_latch(name("latch"));
  EXPECT_TRUE(latch.try_set_count(1));
  auto opened = std::async(std::launch::async,
                           [&] { return other.count_down_latch(name("latch")).await(10s); });
  ASSERT_TRUE(wait_until(
      [&] { return subscribers("redisson_countdownlatch__channel__{" + name("latch") + "}") == 1; },
      5s));
  latch.count_down();
  EXPECT_TRUE(opened.get()) << "the latch's waiter was not woken";

  auto queue = other.blocking_queue(name("queue"));
  std::stop_source end_takes;
  auto taken = std::async(std::launch::async, [&] { return queue.take(end_takes.get_token()); });
  const stop_at_exit taken_ends{end_takes};
  ASSERT_TRUE(wait_until([&] { return blocked_clients(raw) == 1; }, 5s));
  EXPECT_TRUE(client.blocking_queue(name("queue")).offer("now"));
  ASSERT_EQ(taken.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(taken.get(), "now");

  // A take stopped while its BLPOP waits on the server ends that BLPOP at once (CLIENT ID,
  // CLIENT UNBLOCK), not at the end of its 5 s chunk.
  std::stop_source stop;
  auto stopped = std::async(std::launch::async,
                            [&] { return error_of([&] { queue.take(stop.get_token()); }); });
  const stop_at_exit stopped_ends{stop};
  ASSERT_TRUE(wait_until([&] { return blocked_clients(raw) == 1; }, 5s));
  stop.request_stop();
  EXPECT_EQ(stopped.get(), errc::cancelled);
  EXPECT_TRUE(wait_until([&] { return blocked_clients(raw) == 0; }, 1s))
      << "the stopped take's BLPOP still waits on the server";

  auto delayed = client.delayed_queue(name("queue"));  // its transfer lives as long as it does
  delayed.offer("later", 50ms);
  EXPECT_EQ(queue.poll(5s), std::optional<std::string>("later"));
}

// Replica sync is sized by the replicas the sentinels count (SENTINEL REPLICAS): with the rules,
// a lock's write waits for the replica (WAIT) as it does without ACL.
TEST_F(sentinel_acl, replica_sync_waits_for_the_replica_the_sentinels_count) {
  acl_users users(data_block, sentinel_block);
  // restore() demotes an old master itself: the sentinels count it as a replica only once its
  // INFO says so, up to 10 s later, and until then relock counts no replica either.
  ASSERT_TRUE(wait_until(every_sentinel_counts_the_replica, 15s, 50ms));
  relock::client client(as_app());
  auto raw = set().client(set().master_port());
  const auto waits = calls_of(raw, "wait");
  auto lock = client.lock("app:synced-" + stamp());
  ASSERT_TRUE(lock.try_lock());
  EXPECT_GT(calls_of(raw, "wait"), waits) << "the grant was not synced to the replica";
  lock.unlock();
}

// The holder's and the waiter's clients hear +switch-master and move to the new master, where
// the hold is renewed and the waiter takes the lock once it is let go.
TEST_F(sentinel_acl, a_switchover_is_followed_under_the_rules) {
  acl_users users(data_block, sentinel_block);
  relock::client holder_client(as_app()), waiter_client(as_app());
  ASSERT_TRUE(wait_until([] { return watcher_subscriptions() == 2 * sentinel_events; }, 5s))
      << "both clients listen to the sentinel events: " << watcher_subscriptions();
  const std::string name = "app:switch-" + stamp();
  auto held = holder_client.lock(name);
  held.lock();
  std::atomic<bool> acquired{false};
  std::jthread waiter([&] {
    auto lock = waiter_client.lock(name);
    if (lock.try_lock(30s)) {
      acquired = true;
      lock.unlock();
    }
  });

  const auto started = steady::now();
  const std::uint16_t new_master = set().failover();
  const std::string there = "127.0.0.1:" + std::to_string(new_master);
  EXPECT_TRUE(wait_until([&] { return holder_client.inspect(name).node == there; }, 10s, 10ms));
  EXPECT_TRUE(wait_until([&] { return waiter_client.inspect(name).node == there; }, 10s, 10ms));
  std::cout
      << "both clients on the new master "
      << std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count()
      << " ms after SENTINEL FAILOVER\n";
  EXPECT_EQ(set().client(new_master).command({"EXISTS", name}).integer, 1) << "the hold was lost";
  EXPECT_FALSE(acquired.load()) << "the waiter got the lock while it was held";
  held.unlock();
  EXPECT_TRUE(wait_until([&] { return acquired.load(); }, 10s));
  waiter.join();
}

// The rules without the sentinel questions relock asks.
std::string without_questions() {
  std::string rules = sentinel_block;
  for (const std::string left_out : {" +sentinel|get-master-addr-by-name", " +sentinel|replicas"}) {
    const auto at = rules.find(left_out);
    if (at != std::string::npos) rules.erase(at, left_out.size());
  }
  return rules;
}

// What a client's start (or its first lock) threw.
std::pair<std::error_code, std::string> refusal(const relock::config& settings) {
  try {
    relock::client client(settings);
    auto lock = client.lock("app:never-" + stamp());
    if (lock.try_lock()) lock.unlock();
  } catch (const relock::error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

TEST_F(sentinel_acl, a_sentinel_user_without_its_rules_is_refused_with_what_it_lacks) {
  acl_users users(data_block, without_questions());
  auto raw = set().client(set().master_port());
  const std::string before = raw.command({"DEBUG", "DIGEST"}).str;
  const auto [refused, said] = refusal(as_app());
  std::cout << "refused with " << refused.message() << ": " << said << "\n";
  EXPECT_TRUE(refused) << "the client started";
  EXPECT_NE(said.find("NOPERM"), std::string::npos) << said;
  EXPECT_NE(said.find("'sentinel|get-master-addr-by-name'"), std::string::npos)
      << "what is refused is named: " << said;
  EXPECT_EQ(raw.command({"DEBUG", "DIGEST"}).str, before);
}

// Discovery classifies a sentinel's NOPERM: errc::no_permission, not "no master confirmed".
TEST_F(sentinel_acl, a_sentinel_user_without_its_rules_gets_no_permission) {
  acl_users users(data_block, without_questions());
  const auto [refused, said] = refusal(as_app());
  EXPECT_EQ(refused, errc::no_permission) << said;
}

// One event channel left out: the sentinel refuses the SUBSCRIBE of them all, so relock would
// learn of a failover only by asking, once a second.
TEST_F(sentinel_acl, an_event_channel_left_out_refuses_every_event) {
  std::string rules = sentinel_block;
  const auto at = rules.find(" &+reboot");
  ASSERT_NE(at, std::string::npos);
  rules.erase(at, 9);
  acl_users users(data_block, rules);
  for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
    set().sentinel(i).command({"ACL", "LOG", "RESET"});
  }
  auto told = std::make_shared<std::atomic<bool>>(false);
  auto settings = as_app();
  settings.log = [told](log_level level, std::string_view text) {
    if (level == log_level::error &&
        text.find("sentinel events: a subscription was refused") != std::string_view::npos) {
      *told = true;
    }
  };
  relock::client client(settings);
  auto refused_reboot = [] {
    for (std::size_t i = 0; i < set().sentinel_ports().size(); ++i) {
      const auto log = set().sentinel(i).command({"ACL", "LOG"});
      for (const auto& entry : log.elements) {
        bool watcher = false, reboot = false;
        for (std::size_t f = 0; f + 1 < entry.elements.size(); f += 2) {
          watcher |= entry.elements[f].str == "username" && entry.elements[f + 1].str == "watcher";
          reboot |= entry.elements[f].str == "object" && entry.elements[f + 1].str == "+reboot";
        }
        if (watcher && reboot) return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(wait_until(refused_reboot, 5s)) << "no sentinel refused the channel +reboot";
  EXPECT_EQ(watcher_subscriptions(), 0) << "a sentinel took some of the events";
  EXPECT_TRUE(wait_until([&] { return told->load(); }, 5s)) << "the refusal went unsaid";
  auto lock = client.lock("app:still-" + stamp());
  EXPECT_TRUE(lock.try_lock()) << "the data nodes' rules are whole: locks still work";
  lock.unlock();
}

// Without +sentinel|replicas the sentinels refuse the count; taken as no replica, replica_sync
// auto would grant locks without WAIT, saying nothing, and a failover could take them back. So
// a refused count refuses the client (no_permission), naming the command.
TEST_F(sentinel_acl, a_refused_replica_count_never_turns_replica_sync_off_silently) {
  std::string rules = sentinel_block;
  const std::string left_out = " +sentinel|replicas";
  const auto at = rules.find(left_out);
  ASSERT_NE(at, std::string::npos);
  rules.erase(at, left_out.size());
  acl_users users(data_block, rules);
  ASSERT_TRUE(wait_until(every_sentinel_counts_the_replica, 15s, 50ms));
  auto raw = set().client(set().master_port());
  const auto waits = calls_of(raw, "wait");
  const auto [refused, said] = refusal(as_app());
  if (refused) {
    EXPECT_EQ(refused, errc::no_permission) << said;
  } else {
    EXPECT_GT(calls_of(raw, "wait"), waits) << "a lock was granted without replica sync";
  }
}

}  // namespace
}  // namespace relock::test
