// SPDX-License-Identifier: Apache-2.0
// `relock status`, `unlock --force`, `demo`, and how relock fails: the real binary, real Redis.
#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"
#include "support/free_port.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;

TEST_F(cli, status_as_text_and_json) {
  relock::client holder(settings_for(server_));
  auto lk = holder.lock("shown");
  lk.lock(30s);
  lk.lock(30s);
  const auto me = lk.owner_field(relock::owner::current_thread());
  auto text = run({"status", "shown"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("shown: held, kind lock"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(me), std::string::npos) << text.out;

  auto j = json::parse(run({"--json", "status", "shown"}).out);
  EXPECT_EQ(j["locked"], true);
  EXPECT_EQ(j["kind"], "lock");
  EXPECT_EQ(j["holders"][0]["owner"], me);
  EXPECT_EQ(j["holders"][0]["holds"], 2);
  EXPECT_EQ(j["holders"][0]["side"], "exclusive");
  EXPECT_GT(j["remaining_lease_ms"].get<int>(), 20'000);
  lk.unlock();
  lk.unlock();
  auto free_lock = json::parse(run({"status", "shown", "--json"}).out);  // flags after, too
  EXPECT_EQ(free_lock["locked"], false);
  EXPECT_TRUE(free_lock["holders"].empty());
}

// The other kinds' data as Redisson leaves it (data-layout §3-§5), written by hand.
TEST_F(cli, status_reads_fair_read_write_and_fenced_data) {
  raw_.command({"HSET", "fair", "a:1", "1"});
  raw_.command({"RPUSH", "redisson_lock_queue:{fair}", "b:2", "c:3"});
  raw_.command({"ZADD", "redisson_lock_timeout:{fair}", "1700000000000", "b:2",  //
                "1700000005000", "c:3"});
  auto fair = json::parse(run({"--json", "status", "fair"}).out);
  EXPECT_EQ(fair["kind"], "fair");
  ASSERT_EQ(fair["queue"].size(), 2u);
  EXPECT_EQ(fair["queue"][0]["owner"], "b:2");
  EXPECT_EQ(fair["queue"][1]["gives_up_at_ms"], 1700000005000);
  EXPECT_NE(run({"status", "fair"}).out.find("c:3"), std::string::npos);

  raw_.command({"HSET", "rw", "mode", "write", "a:1:write", "2", "a:1", "1"});
  auto rw = json::parse(run({"--json", "status", "rw"}).out);
  EXPECT_EQ(rw["kind"], "read-write");
  EXPECT_EQ(rw["mode"], "write");
  ASSERT_EQ(rw["holders"].size(), 2u);
  for (const auto& h : rw["holders"]) {
    EXPECT_EQ(h["owner"], "a:1");
    EXPECT_EQ(h["holds"], h["side"] == "write" ? 2 : 1);
  }

  raw_.command({"HSET", "fenced", "a:1", "1"});
  raw_.command({"SET", "redisson_lock_token:{fenced}", "41"});
  auto fenced = json::parse(run({"--json", "status", "fenced"}).out);
  EXPECT_EQ(fenced["kind"], "fenced");
  EXPECT_EQ(fenced["fencing_token"], 41);
}

TEST_F(cli, status_of_a_key_that_is_no_lock_is_an_error) {
  raw_.command({"SET", "plain", "text"});
  auto r = run({"status", "plain"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not a lock"), std::string::npos) << r.err;
}

TEST_F(cli, unlock_force_wakes_a_waiting_run) {
  relock::client holder(settings_for(server_));
  holder.lock("stuck").lock(60s);
  cli_process waiting(with_url({"run", "stuck", "--", "true"}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("stuck"); }, 10s));
  const auto forced = steady::now();
  auto r = run({"--json", "unlock", "--force", "stuck"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["released"], true);
  EXPECT_EQ(waiting.wait(5s), 0);
  EXPECT_LT(steady::now() - forced, 3s);  // woken by the unlock message, not by the lease
  auto again = run({"unlock", "--force", "stuck"});
  EXPECT_EQ(again.code, 1);  // nothing left to release
  EXPECT_NE(again.out.find("was not locked"), std::string::npos) << again.out;
}

TEST_F(cli, demo_ends_with_the_exact_count) {
  auto r = run({"demo", "--workers", "4", "--iterations", "50"}, 60s);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("count 200 of 200: exact"), std::string::npos) << r.out;
  auto j = json::parse(run({"--json", "demo", "--workers", "3", "--iterations", "20"}, 60s).out);
  EXPECT_EQ(j["count"], 60);
  EXPECT_EQ(j["expected"], 60);
  EXPECT_EQ(j["acquisitions"], 60);
  EXPECT_EQ(j["private_server"], false);
  // The demo cleans up after itself on the user's server.
  EXPECT_TRUE(raw_.command({"KEYS", "relock-demo:*"}).elements.empty());
}

TEST_F(cli, demo_without_a_url_starts_and_stops_a_private_redis) {
  try {
    raw_client probe("127.0.0.1", 6379, {}, {}, 1s);
    GTEST_SKIP() << "something answers on the default URL; the demo would use it";
  } catch (const std::runtime_error&) {
  }
  auto r = run_cli({"--json", "demo", "--workers", "2", "--iterations", "20"}, 60s,
                   cli_options::with_env({{"RELOCK_URL", ""}}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["private_server"], true);
  EXPECT_EQ(j["count"], 40);
  const std::string url = j["url"];
  const auto port = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  EXPECT_THROW(raw_client("127.0.0.1", port, {}, {}, 1s), std::runtime_error);  // stopped
}

TEST_F(cli, unreachable_redis_and_bad_input_give_exit_2_and_one_line) {
  const closed_port dead_server;
  const std::uint16_t dead_port = dead_server.port();
  const std::string dead = "redis://127.0.0.1:" + std::to_string(dead_port);
  auto unreachable = run_cli({"--url", dead, "status", "x"});
  EXPECT_EQ(unreachable.code, 2);
  EXPECT_EQ(lines(unreachable.err), 1u) << unreachable.err;
  EXPECT_NE(unreachable.err.find(dead), std::string::npos) << unreachable.err;
  auto from_env =
      run_cli({"run", "x", "--", "true"}, 30s, cli_options::with_env({{"RELOCK_URL", dead}}));
  EXPECT_EQ(from_env.code, 2);
  auto bad_url = run_cli({"--url", "http://x", "status", "x"});
  EXPECT_EQ(bad_url.code, 2);
  EXPECT_EQ(lines(bad_url.err), 1u) << bad_url.err;
  auto secret = run_cli({"--url", "redis://u:s3cret@127.0.0.1:" + std::to_string(dead_port),
                         "unlock", "--force", "x"});
  EXPECT_EQ(secret.code, 2);
  EXPECT_EQ(secret.err.find("s3cret"), std::string::npos) << secret.err;

  for (const auto& bad :
       std::vector<std::vector<std::string>>{{},
                                             {"nosuchcommand"},
                                             {"run", "--bogus", "x", "--", "true"},
                                             {"run", "x"},
                                             {"run", "x", "--", "-w", "1"},
                                             {"run", "-w", "soon", "x", "--", "true"},
                                             {"run", "-w", "-1", "x", "--", "true"},
                                             {"run", "--lease", "0", "x", "--", "true"},
                                             {"run", "-s", "-x", "x", "--", "true"},
                                             {"run", "--kind", "bogus", "x", "--", "true"},
                                             {"run", "--kind", "read", "-x", "x", "--", "true"},
                                             {"--watchdog-timeout", "0", "status", "x"},
                                             {"status", ""},
                                             {"unlock", "x"}}) {
    auto r = run(bad);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(bad);
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
}

TEST_F(cli, help_lists_the_exit_codes) {
  auto r = run_cli({"run", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* code : {"Exit codes:", "  1 ", "  2 ", "  3 ", "126/127", "128+N"}) {
    EXPECT_NE(r.out.find(code), std::string::npos) << code;
  }
}

// force_unlock refuses anything but a lock's data and changes nothing; relock says so.
TEST_F(cli, unlock_force_refuses_what_is_not_a_lock_and_leaves_it_as_it_is) {
  raw_.command({"SET", "text", "abc", "PX", "600000"});
  raw_.command({"SET", "count", "12"});
  raw_.command({"RPUSH", "list", "a", "b"});
  raw_.command({"HSET", "person", "name", "bob", "age", "41"});
  const std::vector<std::vector<std::string>> dumps{
      {"GET", "text"}, {"GET", "count"}, {"LRANGE", "list", "0", "-1"}, {"HGETALL", "person"}};
  std::vector<relock::resp::reply> before;
  for (const auto& d : dumps) before.push_back(raw_.command(d));

  for (const std::string name : {"text", "count", "list", "person"}) {
    for (const bool as_json : {false, true}) {
      std::vector<std::string> args{"unlock", "--force", name};
      if (as_json) args.insert(args.begin(), "--json");
      auto r = run(args);
      EXPECT_EQ(r.code, 2) << name;
      EXPECT_EQ(lines(r.err), 1u) << r.err;
      // A string holding an integer is named as status names it: a counter.
      const std::string is = name == "count" ? "' is a counter" : "' is a Redis";
      EXPECT_NE(r.err.find("'" + name + is), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("not a lock"), std::string::npos) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
  for (std::size_t i = 0; i < dumps.size(); ++i) {
    EXPECT_EQ(raw_.command(dumps[i]), before[i]) << dumps[i][1];
  }
  EXPECT_GT(pttl("text"), 500'000);  // its expiry untouched too
  EXPECT_EQ(pttl("count"), -1);
}

// (A string holding an integer is a semaphore's or a latch's count: status shows its value,
// cli_semaphore_test.)
TEST_F(cli, status_names_what_a_key_that_is_no_lock_holds) {
  raw_.command({"SADD", "tags", "a"});
  raw_.command({"HSET", "person", "name", "bob"});
  for (const auto& [name, says] : std::vector<std::pair<std::string, std::string>>{
           {"tags", "'tags' is a Redis set, not a lock"},
           {"person", "'person' is a Redis hash, not a lock"}}) {
    auto r = run({"status", name});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  // A list is a queue (Redisson's RBlockingQueue): status shows it as one.
  raw_.command({"RPUSH", "list", "a"});
  auto queue = run({"status", "list"});
  EXPECT_EQ(queue.code, 0) << queue.err;
  EXPECT_NE(queue.out.find("list: queue, 1 element ready"), std::string::npos) << queue.out;
}
