// SPDX-License-Identifier: Apache-2.0
// multi_lock on real servers: all or nothing over names on one server and over three servers,
// across processes and threads, in any member order, with a member held elsewhere or its
// server gone.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <relock/client.hpp>
#include <relock/multi_lock.hpp>

#include "locks/lock_access.hpp"
#include "support/child_process.hpp"
#include "support/lock_env.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// Adds one to each counter under the multi-lock, by a read and a write apart: lost updates
// show any overlap of two holders.
void add_under(relock::multi_lock& all, std::vector<raw_client>& raws, int times) {
  for (int i = 0; i < times; ++i) {
    all.lock();
    for (std::size_t k = 0; k < raws.size(); ++k) {
      const auto key = "count" + std::to_string(k);
      const auto r = raws[k].command({"GET", key});
      const long long n = r.is_nil() ? 0 : std::stoll(r.str);
      raws[k].command({"SET", key, std::to_string(n + 1)});
    }
    all.unlock();
  }
}

// Two processes, two threads each, every one adding under a multi-lock over `names`, member k
// on servers[k % servers.size()]; each counter must come out exact.
void counters_stay_exact(const std::vector<redis_server*>& servers) {
  constexpr int processes = 2, threads = 2, times = 40;
  auto work = [&] {
    std::vector<std::unique_ptr<relock::client>> clients;
    for (auto* s : servers) clients.push_back(std::make_unique<relock::client>(settings_for(*s)));
    std::vector<std::thread> pool;
    std::atomic<int> failed{0};
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        try {
          std::vector<relock::mutex> members;
          std::vector<raw_client> raws;
          for (int k = 0; k < 3; ++k) {
            members.push_back(clients[k % clients.size()]->lock("m" + std::to_string(k)));
            raws.push_back(raw_client::to(*servers[k % servers.size()]));
          }
          relock::multi_lock all(std::move(members));
          add_under(all, raws, times);
        } catch (...) {
          ++failed;
        }
      });
    }
    for (auto& t : pool) t.join();
    return failed.load() == 0 ? 0 : 1;
  };
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(fork_child(work));
    ASSERT_GT(children.back(), 0);
  }
  expect_children_succeed(children);
  for (int k = 0; k < 3; ++k) {
    auto raw = raw_client::to(*servers[k % servers.size()]);
    EXPECT_EQ(raw.command({"GET", "count" + std::to_string(k)}).str,
              std::to_string(processes * threads * times))
        << "counter " << k;
    EXPECT_EQ(raw.command({"EXISTS", "m" + std::to_string(k)}).integer, 0);
  }
}

}  // namespace

TEST(multi_lock, three_names_on_one_server_exclude_across_processes) {
  redis_server server;
  counters_stay_exact({&server});
}

TEST(multi_lock, three_servers_one_client_each_exclude_across_processes) {
  redis_server a, b, c;
  counters_stay_exact({&a, &b, &c});
}

// Redisson takes members in the order given: two sets over the same locks in opposite orders
// can starve each other. relock sorts them: 8 threads on each order all finish, counts exact.
TEST(multi_lock, opposite_member_orders_neither_deadlock_nor_livelock) {
  redis_server server;
  relock::client client(settings_for(server));
  std::atomic<int> inside{0}, overlaps{0};
  long long count = 0;  // guarded by the multi-lock alone
  constexpr int threads = 8, times = 15;
  std::atomic<int> timed_out{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 2 * threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<std::string> names{"x", "y", "z"};
      if (t % 2 == 1) std::reverse(names.begin(), names.end());
      relock::multi_lock all(client.lock(names[0]), client.lock(names[1]), client.lock(names[2]));
      for (int i = 0; i < times; ++i) {
        if (!all.try_lock(60s)) {
          ++timed_out;
          return;
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        ++count;
        inside.fetch_sub(1);
        all.unlock();
      }
    });
  }
  for (auto& t : pool) t.join();
  EXPECT_EQ(timed_out.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(count, 2 * threads * times);
}

TEST(multi_lock, a_member_held_elsewhere_fails_the_wait_holding_nothing) {
  redis_server server;
  relock::client mine(settings_for(server)), theirs(settings_for(server));
  auto raw = raw_client::to(server);
  auto held = theirs.lock("b");
  const relock::owner other{42};
  held.async_lock(other, {}, asio::use_future).get();
  relock::multi_lock all(mine.lock("a"), mine.lock("b"), mine.lock("c"));
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(all.try_lock(300ms));
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 0);
  EXPECT_EQ(raw.command({"EXISTS", "c"}).integer, 0);
  EXPECT_EQ(raw.command({"HLEN", "b"}).integer, 1);  // theirs alone
  EXPECT_FALSE(all.try_lock());
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 0);
  held.async_unlock(other, asio::use_future).get();
  EXPECT_TRUE(all.try_lock(1s));
  EXPECT_EQ(raw.command({"HGET", "a", my_field(mine)}).str, "1");
  all.unlock();
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer + raw.command({"EXISTS", "b"}).integer, 0);
}

// The waiter waits on the held member's own channel: the release wakes it at once.
TEST(multi_lock, a_waiting_set_wakes_on_the_members_release_message) {
  redis_server server;
  relock::client mine(settings_for(server)), theirs(settings_for(server));
  auto held = theirs.lock("q");
  const relock::owner other{42};
  held.async_lock(other, {.lease = 30s}, asio::use_future).get();
  relock::multi_lock all(mine.lock("p"), mine.lock("q"));
  auto got = all.async_try_lock(relock::owner{7}, {.wait = 20s}, asio::use_future);
  auto raw = raw_client::to(server);
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, "redisson_lock__channel:{q}"); }, 5s));
  const auto released = std::chrono::steady_clock::now();
  held.async_unlock(other, asio::use_future).get();
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(got.get());
  EXPECT_LT(std::chrono::steady_clock::now() - released, 1s);  // not the 30 s lease
  all.async_unlock(relock::owner{7}, asio::use_future).get();
}

TEST(multi_lock, a_member_server_killed_or_stopped_mid_acquire_leaves_nothing_held) {
  redis_server a, b, c;
  auto quick = [](const redis_server& s) {
    auto cfg = settings_for(s);
    cfg.command_timeout = 500ms;
    return cfg;
  };
  relock::client ca(quick(a)), cb(quick(b)), cc(quick(c));
  relock::multi_lock all(ca.lock("k1"), cb.lock("k2"), cc.lock("k3"));
  auto ra = raw_client::to(a), rc = raw_client::to(c);

  b.pause();
  EXPECT_THROW(all.try_lock(400ms), relock::error);
  EXPECT_EQ(ra.command({"EXISTS", "k1"}).integer, 0);
  EXPECT_EQ(rc.command({"EXISTS", "k3"}).integer, 0);
  b.resume();
  // The try that sat in the stopped server's socket runs now, and is taken back.
  auto rb = raw_client::to(b);
  EXPECT_TRUE(wait_until([&] { return rb.command({"EXISTS", "k2"}).integer == 0; }, 5s));

  b.kill();
  try {
    all.try_lock(400ms);
    ADD_FAILURE() << "acquired with a member's server down";
  } catch (const relock::error& e) {
    EXPECT_TRUE(e.code() == relock::errc::connection || e.code() == relock::errc::timeout)
        << e.what();
  }
  EXPECT_EQ(ra.command({"EXISTS", "k1"}).integer, 0);
  EXPECT_EQ(rc.command({"EXISTS", "k3"}).integer, 0);
}

TEST(multi_lock, any_kinds_mix_and_std_lock_guards_work) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto rw = client.read_write_lock("rw");
  relock::multi_lock all(client.fair_lock("fair"), rw.read_lock(), client.fenced_lock("fenced"),
                         client.spin_lock("spin"), client.lock("plain"));
  {
    std::unique_lock guard(all);
    EXPECT_EQ(raw.command({"HGET", "rw", "mode"}).str, "read");
    EXPECT_EQ(raw.command({"EXISTS", "fair"}).integer, 1);
    EXPECT_EQ(raw.command({"EXISTS", "spin"}).integer, 1);
    const auto until = all.valid_until();
    ASSERT_TRUE(until.has_value());
    EXPECT_GT(*until, std::chrono::steady_clock::now() + 20s);  // the watchdog lease, 30 s
  }
  for (const char* k : {"rw", "fair", "fenced", "spin", "plain"}) {
    EXPECT_EQ(raw.command({"EXISTS", k}).integer, 0) << k;
  }
  auto l1 = client.lock("s1"), l2 = client.lock("s2");
  {
    std::scoped_lock both(l1, l2);  // the standard's own algorithm over plain locks
    EXPECT_EQ(raw.command({"EXISTS", "s1"}).integer + raw.command({"EXISTS", "s2"}).integer, 2);
  }
  EXPECT_TRUE(all.try_lock_for(1s));
  all.unlock();
}

TEST(multi_lock, an_explicit_lease_applies_to_every_member) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  relock::multi_lock all(client.lock("l1"), client.lock("l2"));
  EXPECT_TRUE(all.try_lock(1s, 2s));
  for (const char* k : {"l1", "l2"}) {
    const auto ttl = raw.command({"PTTL", k}).integer;
    EXPECT_GT(ttl, 1000) << k;
    EXPECT_LE(ttl, 2000) << k;
  }
  all.unlock();
}

TEST(multi_lock, bad_sets_and_bad_unlocks_are_refused_clearly) {
  redis_server server;
  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  EXPECT_EQ(error_of([&] { relock::multi_lock none(std::vector<relock::mutex>{}); }),
            relock::errc::invalid_argument);
  EXPECT_EQ(error_of([&] { relock::multi_lock twice(client.lock("a"), client.fair_lock("a")); }),
            relock::errc::invalid_argument);
  relock::multi_lock all(client.lock("a"), client.lock("b"));
  EXPECT_EQ(error_of([&] { all.try_lock(-1ms); }), relock::errc::invalid_argument);
  auto failures = all.unlock_members();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].ec, relock::errc::not_owner);
  std::error_code ec;
  all.unlock(ec);
  EXPECT_EQ(ec, relock::errc::not_owner);
  // One member taken away while held: the set's unlock says it was lost.
  ASSERT_TRUE(all.try_lock());
  raw.command({"DEL", "b"});
  all.unlock(ec);
  EXPECT_EQ(ec, relock::errc::lock_lost);
  // A member whose key holds another type: the set fails with wrong_type, holding nothing.
  raw.command({"SET", "b", "not a lock"});
  EXPECT_EQ(error_of([&] { all.try_lock(200ms); }), relock::errc::wrong_type);
  EXPECT_EQ(raw.command({"EXISTS", "a"}).integer, 0);
  EXPECT_EQ(raw.command({"GET", "b"}).str, "not a lock");
}

TEST(multi_lock, one_key_of_one_server_by_two_clients_is_a_member_twice) {
  // It would wait on itself: each client is another owner of the one key.
  redis_server server;
  relock::client client(settings_for(server));
  auto cfg = settings_for(server);
  cfg.url.replace(cfg.url.find("127.0.0.1"), 9, "localhost");
  relock::client again(cfg);
  EXPECT_EQ(error_of([&] { relock::multi_lock twice(client.lock("a"), again.lock("a")); }),
            relock::errc::invalid_argument);
  // The same key in another database is another key.
  auto other_db = settings_for(server);
  other_db.url += "/1";
  relock::client elsewhere(other_db);
  relock::multi_lock two(client.lock("a"), elsewhere.lock("a"));
  EXPECT_TRUE(two.try_lock(1s));
  two.unlock();
}

TEST(multi_lock, every_process_sorts_the_members_alike_however_it_spells_the_servers) {
  // Sorted by how each process spells the servers, two processes could wait on each other.
  redis_server one, two;
  auto spelled = [](const redis_server& s, bool localhost) {
    auto cfg = settings_for(s);
    if (localhost) cfg.url.replace(cfg.url.find("127.0.0.1"), 9, "localhost");
    return std::make_unique<relock::client>(cfg);
  };
  auto order = [](const relock::multi_lock& set) {
    std::vector<std::string> servers;
    for (const auto& m : set.members()) {
      servers.push_back(relock::detail::locks::lock_access::core(m).server_id());
    }
    return servers;
  };
  // Either way, one of the two spells its first server by localhost, which sorts after
  // 127.0.0.1 as text.
  auto a1 = spelled(one, true), a2 = spelled(two, false);
  auto b1 = spelled(one, false), b2 = spelled(two, true);
  relock::multi_lock a(a1->lock("x"), a2->lock("x"));
  relock::multi_lock b(b1->lock("x"), b2->lock("x"));
  EXPECT_EQ(order(a), order(b));
}
