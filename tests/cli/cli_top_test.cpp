// SPDX-License-Identifier: Apache-2.0
// `relock top --once`: one row per object whose name matches, found with SCAN, whoever holds it.
// The test's own relock::client holds the locks, so each holder's pid is the test's. Auxiliary
// keys (a fair lock's queue, read holds' timeouts, a fenced lock's counter, a permit semaphore's
// permits taken, a delayed queue's keys) show under their object, never as objects of their own.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <relock/client.hpp>
#include <set>
#include <thread>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"
#include "support/free_port.hpp"
#include "support/host_name.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;

namespace {

// The object named `name` in top's JSON; a null json when it is not there.
json object_named(const json& top, const std::string& name) {
  for (const auto& o : top["objects"]) {
    if (o["name"] == name) return o;
  }
  return nullptr;
}

std::set<std::string> names_in(const json& top) {
  std::set<std::string> names;
  for (const auto& o : top["objects"]) names.insert(o["name"].get<std::string>());
  return names;
}

}  // namespace

TEST_F(cli, top_once_json_shows_each_kind_with_holders_waiters_permits_and_lengths) {
  relock::client client(settings_for(server_));
  auto held = client.lock("top:held");
  held.lock();
  // A fair lock held here, and a waiter queued behind it on another thread (another owner).
  auto fair = client.fair_lock("top:fair");
  fair.lock();
  std::jthread waiter([&client] {
    auto mine = client.fair_lock("top:fair");
    if (mine.try_lock(30s)) mine.unlock();
  });
  ASSERT_TRUE(wait_until(
      [&] {
        return raw_.command({"LLEN", "redisson_lock_queue:{top:fair}"}).integer == 1;
      },
      10s));
  auto reading = client.read_write_lock("top:rw");
  reading.read_lock().lock();  // {top:rw}:<owner>:rwlock_timeout:1 beside it
  auto fenced = client.fenced_lock("top:fenced");
  fenced.lock_and_get_token();  // redisson_lock_token:{top:fenced} beside it
  ASSERT_TRUE(client.semaphore("top:sem").try_set_permits(3));
  auto permits = client.permit_expirable_semaphore("top:permits");
  ASSERT_TRUE(permits.try_set_permits(2));
  auto permit = permits.acquire();  // {top:permits}:timeout beside it
  auto queue = client.blocking_queue("top:queue");
  queue.offer("a");
  queue.offer("b");
  client.delayed_queue("top:queue").offer("later", 10min);  // redisson_delay_queue*:{top:queue}

  const auto r = run({"--json", "top", "--once"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto top = json::parse(r.out);
  EXPECT_EQ(names_in(top), (std::set<std::string>{"top:held", "top:fair", "top:rw", "top:fenced",
                                                  "top:sem", "top:permits", "top:queue"}))
      << "auxiliary keys must show under their objects: " << top.dump();
  EXPECT_EQ(top["matched"], 7);

  const auto lock = object_named(top, "top:held");
  EXPECT_EQ(lock["kind"], "lock");
  ASSERT_EQ(lock["holders"].size(), 1u) << lock.dump();
  EXPECT_EQ(lock["holders"][0]["pid"], std::to_string(::getpid()));
  EXPECT_EQ(lock["holders"][0]["host"], host_name());
  EXPECT_EQ(lock["holders"][0]["holds"], 1);
  EXPECT_NE(lock["holders"][0]["addr"].get<std::string>().find("127.0.0.1:"), std::string::npos);
  EXPECT_GT(lock["remaining_lease_ms"].get<std::int64_t>(), 0);
  EXPECT_EQ(lock["node"], "127.0.0.1:" + std::to_string(server_.port()));
  EXPECT_TRUE(lock["permits"].is_null());
  EXPECT_TRUE(lock["length"].is_null());

  const auto queued = object_named(top, "top:fair");
  EXPECT_EQ(queued["kind"], "fair");
  EXPECT_EQ(queued["waiters"], 1);
  EXPECT_EQ(queued["holders"].size(), 1u);

  const auto rw = object_named(top, "top:rw");
  EXPECT_EQ(rw["kind"], "read-write");
  EXPECT_EQ(rw["holders"][0]["side"], "read");
  EXPECT_EQ(object_named(top, "top:fenced")["kind"], "fenced");

  const auto sem = object_named(top, "top:sem");
  EXPECT_EQ(sem["kind"], "counter");
  EXPECT_EQ(sem["permits"], 3);
  EXPECT_TRUE(sem["holders"].is_null());
  EXPECT_TRUE(sem["remaining_lease_ms"].is_null());
  const auto pes = object_named(top, "top:permits");
  EXPECT_EQ(pes["kind"], "permit-semaphore");
  EXPECT_EQ(pes["permits"], 1);
  EXPECT_EQ(pes["permits_taken"], 1);

  const auto q = object_named(top, "top:queue");
  EXPECT_EQ(q["kind"], "queue");
  EXPECT_EQ(q["length"], 2);
  EXPECT_EQ(q["delayed"], 1);
  EXPECT_TRUE(q["subscribers"].is_null());

  fair.unlock();  // the waiter takes it and lets go
  waiter.join();
  permit.release();
}

TEST_F(cli, top_counts_the_subscribers_waiting_on_a_lock) {
  relock::client client(settings_for(server_));
  auto held = client.lock("top:busy");
  held.lock();
  std::jthread waiter([&client] {
    auto mine = client.lock("top:busy");
    if (mine.try_lock(30s)) mine.unlock();
  });
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("top:busy"); }, 10s));
  const auto top = json::parse(run({"--json", "top", "top:busy"}).out);  // --json: one document
  EXPECT_EQ(object_named(top, "top:busy")["subscribers"], 1) << top.dump();
  held.unlock();
  waiter.join();
}

TEST_F(cli, top_shows_only_the_names_that_match_the_pattern) {
  relock::client client(settings_for(server_));
  auto a = client.lock("app:a");
  auto b = client.lock("app:b");
  auto other = client.lock("other:c");
  a.lock();
  b.lock();
  other.lock();
  // All there is of it: its delayed queue's keys, which SCAN MATCH app:* does not name.
  client.delayed_queue("app:later").offer("x", 10min);

  const auto top = json::parse(run({"--json", "top", "--once", "app:*"}).out);
  EXPECT_EQ(names_in(top), (std::set<std::string>{"app:a", "app:b", "app:later"})) << top.dump();
  EXPECT_EQ(object_named(top, "app:later")["delayed"], 1);
  EXPECT_EQ(names_in(json::parse(run({"--json", "top", "--once", "other:?"}).out)),
            std::set<std::string>{"other:c"});
  EXPECT_TRUE(names_in(json::parse(run({"--json", "top", "--once", "none:*"}).out)).empty());
}

TEST_F(cli, top_pages_through_many_unrelated_keys) {
  // More keys than one SCAN page holds, none of them a lock.
  std::vector<std::string> mset{"MSET"};
  for (int i = 0; i < 2500; ++i) {
    mset.push_back("cache:" + std::to_string(i));
    mset.push_back("page " + std::to_string(i));
  }
  ASSERT_EQ(raw_.command(mset).str, "OK");
  relock::client client(settings_for(server_));
  auto held = client.lock("among:many");
  held.lock();

  const auto started = std::chrono::steady_clock::now();
  const auto r = run({"--json", "top", "--once"}, 20s);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  const auto top = json::parse(r.out);
  EXPECT_EQ(names_in(top), std::set<std::string>{"among:many"});
  EXPECT_EQ(top["matched"], 1);
}

TEST_F(cli, top_once_prints_one_plain_screen) {
  relock::client client(settings_for(server_));
  auto held = client.lock("plain:held");
  held.lock();
  raw_.command({"SET", "plain:sem", "4"});
  const auto r = run({"top", "--once", "--sort", "kind"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "no ANSI in --once";
  EXPECT_NE(r.out.find("redis://127.0.0.1:" + std::to_string(server_.port())), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("objects 2 of 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sort kind"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NAME"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pid " + std::to_string(::getpid())), std::string::npos) << r.out;
  // By kind: the counter before the lock.
  EXPECT_LT(r.out.find("plain:sem"), r.out.find("plain:held")) << r.out;

  const auto limited = run({"top", "--once", "--limit", "1"});
  EXPECT_NE(limited.out.find("objects 1 of 2"), std::string::npos) << limited.out;
  EXPECT_EQ(lines(limited.out), 4u) << limited.out;  // header, blank, titles, one row
}

TEST_F(cli, top_shows_the_url_without_its_password_and_whether_no_touch_holds) {
  redis_server secured({.password = "top-secret-pw"});
  const auto url = "redis://:top-secret-pw@127.0.0.1:" + std::to_string(secured.port());
  const auto r = run_cli({"--url", url, "top", "--once"}, 20s);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("top-secret-pw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redis://:***@127.0.0.1:"), std::string::npos) << r.out;
  // CLIENT NO-TOUCH came with Redis 7.2: before it, the header says reads may touch LRU/LFU.
  const auto info = raw_.command({"INFO", "server"}).str;
  const auto at = info.find("redis_version:") + 14;
  const auto major = std::stoi(info.substr(at));
  const auto minor = std::stoi(info.substr(info.find('.', at) + 1));
  const bool no_touch = major > 7 || (major == 7 && minor >= 2);
  EXPECT_EQ(r.out.find("(no-touch unavailable)") == std::string::npos, no_touch) << r.out;
}

TEST_F(cli, top_under_an_acl_user_shows_the_names_it_may_read_and_counts_the_others) {
  // SCAN lists every key whatever the user's key rules; inspecting one outside them is refused.
  raw_.command({"ACL", "SETUSER", "watcher", "on", ">watcher-pw", "resetkeys", "~app:*", "~{app:*",
                "~redisson_*:{app:*", "&*", "+@all"});
  relock::client client(settings_for(server_));
  auto mine = client.lock("app:visible");
  auto theirs = client.lock("secret:hidden");
  mine.lock();
  theirs.lock();
  const std::string url = "redis://watcher:watcher-pw@127.0.0.1:" + std::to_string(server_.port());
  const auto json_run = run_cli({"--url", url, "--json", "top"}, 20s);
  ASSERT_EQ(json_run.code, 0) << json_run.err;
  EXPECT_EQ(names_in(json::parse(json_run.out)), std::set<std::string>{"app:visible"});
  const auto text = run_cli({"--url", url, "top", "--once"}, 20s);
  EXPECT_NE(text.out.find("(1 name refused by the ACL)"), std::string::npos) << text.out;
}

TEST_F(cli, top_says_when_redis_is_unreachable_and_exits_2) {
  const closed_port dead;
  const auto url = "redis://127.0.0.1:" + std::to_string(dead.port());
  const auto r = run_cli({"--url", url, "top", "--once"}, 20s);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("relock: cannot connect"), std::string::npos) << r.err;
}

TEST_F(cli, top_without_once_wants_a_terminal) {
  const auto r = run({"top"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--once"), std::string::npos) << r.err;
}
