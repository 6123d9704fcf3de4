// SPDX-License-Identifier: Apache-2.0
// `relock run --semaphore N NAME`: at most N commands at once across processes, a permit of a
// dead relock coming back within the watchdog lease, a permit found gone stopping the command;
// and `relock status` on a permit-expirable semaphore (its permits and their expiries) and on a
// counter (a semaphore's or a latch's). The real binary, real Redis.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"

namespace cli_semaphore_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t starting_with(const std::vector<std::string>& lines, const std::string& prefix) {
  return static_cast<std::size_t>(std::count_if(
      lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(prefix); }));
}

// Running, and not a zombie (as in cli_run_loss_test).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto state_at = line.rfind(')') + 2;
  return state_at < line.size() && line[state_at] != 'Z' && line[state_at] != 'X';
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class cli_semaphore : public cli {
 protected:
  // Relocks waiting for a permit of `name` listen on its channel (data-layout §7).
  std::int64_t waiting_on(const std::string& name) {
    return raw_.command({"PUBSUB", "NUMSUB", "redisson_sc:{" + name + "}"}).elements.at(1).integer;
  }
};

// Five relocks, two permits: the first two run, the other three wait; once the two may finish,
// all five run, never more than two at once. Each command logs its start (with its permit's id)
// and its end; a command starts only after its relock took a permit, and ends before the permit
// goes back, so the log's order is the order that matters.
TEST_F(cli_semaphore, at_most_n_commands_run_at_once_and_all_complete) {
  const auto log = file("log"), go = file("go");
  const std::string script =
      "echo \"start $RELOCK_PERMIT\" >> \"$0\"; "
      "while [ ! -e \"$1\" ]; do sleep 0.02; done; sleep 0.3; echo end >> \"$0\"";
  std::vector<std::unique_ptr<cli_process>> relocks;
  for (int i = 0; i < 5; ++i) {
    relocks.push_back(std::make_unique<cli_process>(
        with_url({"run", "--semaphore", "2", "pool", "--", "sh", "-c", script, log, go})));
  }
  ASSERT_TRUE(wait_until([&] { return starting_with(lines_of(log), "start") == 2; }, 20s));
  ASSERT_TRUE(wait_until([&] { return waiting_on("pool") >= 3; }, 20s)) << waiting_on("pool");
  // Three are waiting: none of them gets a third permit while the two hold theirs.
  EXPECT_FALSE(wait_until([&] { return starting_with(lines_of(log), "start") > 2; }, 500ms));

  // The two permits taken, as status shows them: the commands' own ids, renewed by the watchdog.
  const auto taken = json::parse(run({"--json", "status", "pool"}).out);
  EXPECT_EQ(taken["kind"], "permit-semaphore");
  EXPECT_EQ(taken["available"], 0);
  EXPECT_EQ(taken["permits_taken"], 2);
  ASSERT_EQ(taken["permits"].size(), 2u);
  const auto started = lines_of(log);
  for (const auto& p : taken["permits"]) {
    const std::string id = p["id"];
    EXPECT_EQ(id.size(), 32u);
    EXPECT_NE(std::find(started.begin(), started.end(), "start " + id), started.end()) << id;
    EXPECT_GT(p["expires_in_ms"].get<std::int64_t>(), 0);
    EXPECT_LE(p["expires_in_ms"].get<std::int64_t>(), 30'000);  // the default watchdog lease
  }

  std::ofstream(go).put('\n');
  for (auto& r : relocks) {
    EXPECT_EQ(r->wait(30s), 0) << r->err();
    EXPECT_TRUE(r->err().empty()) << r->err();
  }
  const auto all = lines_of(log);
  ASSERT_EQ(all.size(), 10u);
  int at_once = 0, most = 0;
  for (const auto& l : all) {
    at_once += l.starts_with("start") ? 1 : -1;
    most = std::max(most, at_once);
  }
  EXPECT_EQ(most, 2);
  // Every permit came back: two available, none taken.
  EXPECT_EQ(raw_.command({"GET", "pool"}).str, "2");
  EXPECT_FALSE(exists("{pool}:timeout"));
}

// A relock killed with SIGKILL (its command dies with it) cannot release; the watchdog stops
// renewing its permit, which comes back when its lease runs out, and a waiting relock takes it.
TEST_F(cli_semaphore, a_killed_holders_permit_comes_back_within_the_watchdog_lease) {
  const auto pid_file = file("pid"), done = file("done");
  cli_process holder(with_url({"--watchdog-timeout", "3", "run", "--semaphore", "1", "crash", "--",
                               "sh", "-c", "echo $$ > \"$0\"; exec sleep 60", pid_file}));
  ASSERT_TRUE(appears(pid_file));
  std::optional<pid_t> command;
  ASSERT_TRUE(wait_until(
      [&] {
        std::ifstream in(pid_file);
        std::string line;
        if (!std::getline(in, line) || in.eof()) return false;  // no newline yet
        command = static_cast<pid_t>(std::stol(line));
        return true;
      },
      10s));
  cli_process waiter(with_url(
      {"--watchdog-timeout", "3", "run", "--semaphore", "1", "crash", "--", "touch", done}));
  ASSERT_TRUE(wait_until([&] { return waiting_on("crash") >= 1; }, 20s));
  // Renewed while its relock lives: still taken well past one lease.
  EXPECT_FALSE(wait_until([&] { return std::filesystem::exists(done); }, 4s));

  holder.signal(SIGKILL);
  const auto killed = steady::now();
  EXPECT_EQ(holder.wait(10s), 128 + SIGKILL);
  ASSERT_EQ(waiter.wait(20s), 0) << waiter.err();
  const auto back = steady::now() - killed;
  std::cout << "permit back " << std::chrono::duration_cast<std::chrono::milliseconds>(back).count()
            << " ms after the SIGKILL (watchdog lease 3000 ms)" << std::endl;
  EXPECT_TRUE(std::filesystem::exists(done));
  // Not at once: when the lease of its last renewal (at most a third of the lease before the
  // kill) ran out ...
  EXPECT_GT(back, 1500ms);
  // ... and within the lease, give or take a loaded machine's process start.
  EXPECT_LT(back, 3s + 2s);
  EXPECT_TRUE(wait_until([&] { return !running(*command); }, 5s));
  if (running(*command)) kill(*command, SIGKILL);  // the test's own cleanup, by PID
  EXPECT_EQ(raw_.command({"GET", "crash"}).str, "1");
}

// The watchdog finds the permit gone (its zset deleted): the command gets SIGTERM, relock exits 3.
TEST_F(cli_semaphore, a_permit_found_gone_stops_the_command_with_exit_3) {
  const auto ready = file("ready"), stopped = file("stopped");
  cli_process p(
      with_url({"--watchdog-timeout", "1.5", "run", "--semaphore", "1", "lost", "--", "sh", "-c",
                "trap 'touch \"$1\"; exit 0' TERM; touch \"$0\"; "
                "while :; do sleep 0.05; done",
                ready, stopped}));
  ASSERT_TRUE(appears(ready));
  raw_.command({"DEL", "{lost}:timeout"});
  EXPECT_EQ(p.wait(10s), 3) << p.err();
  EXPECT_TRUE(std::filesystem::exists(stopped));  // it got SIGTERM
  EXPECT_EQ(lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find("lost the permit of the semaphore 'lost' while the command ran"),
            std::string::npos)
      << p.err();
}

TEST_F(cli_semaphore, no_permit_free_gives_up_as_run_does) {
  const auto ready = file("ready");
  cli_process holder(with_url(
      {"run", "--semaphore", "1", "busy", "--", "sh", "-c", "touch \"$0\"; exec sleep 60", ready}));
  ASSERT_TRUE(appears(ready));
  auto at_once = run({"run", "-n", "--semaphore", "1", "busy", "--", "true"});
  EXPECT_EQ(at_once.code, 1);
  EXPECT_EQ(lines(at_once.err), 1u) << at_once.err;
  EXPECT_NE(at_once.err.find("no permit of the semaphore 'busy' is free; not waiting (-n)"),
            std::string::npos)
      << at_once.err;
  const auto asked = steady::now();
  auto waited = run({"run", "-w", "0.3", "-E", "75", "--semaphore", "1", "busy", "--", "true"});
  EXPECT_EQ(waited.code, 75);
  EXPECT_GE(steady::now() - asked, 300ms);
  EXPECT_NE(waited.err.find("gave up after 0.3 s"), std::string::npos) << waited.err;
  // A --lease permit: the command is stopped when it runs out, as with a lock.
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(10s), 128 + SIGTERM);
  auto leased = run({"run", "--lease", "0.5", "--semaphore", "1", "busy", "--", "sleep", "30"});
  EXPECT_EQ(leased.code, 3) << leased.err;
  EXPECT_NE(leased.err.find("lost the permit of the semaphore 'busy'"), std::string::npos)
      << leased.err;
}

TEST_F(cli_semaphore, made_with_n_permits_when_absent_used_as_it_is_otherwise) {
  auto made =
      run({"run", "--semaphore", "2", "fresh", "--", "sh", "-c", "echo \"$RELOCK_PERMIT\""});
  EXPECT_EQ(made.code, 0) << made.err;
  EXPECT_TRUE(made.err.empty()) << made.err;
  EXPECT_EQ(made.out.size(), 33u) << made.out;  // 32 hex chars and a newline
  EXPECT_EQ(raw_.command({"GET", "fresh"}).str, "2");

  relock::client java_like(settings_for(server_));
  ASSERT_TRUE(java_like.permit_expirable_semaphore("wide").try_set_permits(3));
  auto wider = run({"run", "--semaphore", "2", "wide", "--", "true"});
  EXPECT_EQ(wider.code, 0) << wider.err;
  EXPECT_EQ(lines(wider.err), 1u) << wider.err;
  EXPECT_NE(wider.err.find("note: the semaphore 'wide' has 3 permits (3 available, 0 taken), "
                           "not 2; using it as it is"),
            std::string::npos)
      << wider.err;
  EXPECT_EQ(raw_.command({"GET", "wide"}).str, "3");  // left as it was
  auto same = run({"run", "--semaphore", "3", "wide", "--", "true"});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_TRUE(same.err.empty()) << same.err;
}

TEST_F(cli_semaphore, refuses_a_name_that_is_no_semaphore_and_bad_flags) {
  raw_.command({"HSET", "locked", "a:1", "1"});
  raw_.command({"SET", "text", "abc"});
  for (const auto& [name, says] : std::vector<std::pair<std::string, std::string>>{
           {"locked", "'locked' holds a lock (kind lock), not a semaphore"},
           {"text", "'text' is a Redis string, not a semaphore's count"}}) {
    auto r = run({"run", "--semaphore", "2", name, "--", "true"});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_EQ(raw_.command({"HGET", "locked", "a:1"}).str, "1");
  EXPECT_EQ(raw_.command({"GET", "text"}).str, "abc");
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"run", "--semaphore", "0", "x", "--", "true"},
           {"run", "--semaphore", "two", "x", "--", "true"},
           {"run", "--semaphore", "2", "--all", "x,y", "--", "true"},
           {"run", "--semaphore", "2", "-s", "x", "--", "true"},
           {"run", "--semaphore", "2", "--kind", "fair", "x", "--", "true"},
           {"run", "--semaphore", "2", "--redlock", "redis://a,redis://b,redis://c", "x", "--",
            "true"}}) {
    auto r = run(bad);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(bad);
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
  EXPECT_FALSE(exists("x"));
}

// Permits as Redisson leaves them (data-layout §7), written by hand: 16-byte ids, one that never
// expires, one that will, one past its expiry but not yet taken back.
TEST_F(cli_semaphore, status_shows_permits_with_their_expiries) {
  const std::string never(16, '\x01'),
      later(
          "\x00\xff\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0"
          "\xc0\xd0\xef",
          16),
      past(16, '\xab');
  const auto now = now_ms();
  raw_.command({"SET", "pool", "1"});
  raw_.command({"ZADD", "{pool}:timeout", "922337203685477", never, std::to_string(now + 60'000),
                later, std::to_string(now - 5'000), past});
  auto j = json::parse(run({"--json", "status", "pool"}).out);
  EXPECT_EQ(j["kind"], "permit-semaphore");
  EXPECT_EQ(j["available"], 1);
  EXPECT_EQ(j["permits_taken"], 3);
  ASSERT_EQ(j["permits"].size(), 3u);
  // Soonest to expire first; "never" last.
  EXPECT_EQ(j["permits"][0]["id"], "abababababababababababababababab");
  EXPECT_LT(j["permits"][0]["expires_in_ms"].get<std::int64_t>(), -4'000);
  EXPECT_EQ(j["permits"][1]["id"], "00ff102030405060708090a0b0c0d0ef");
  EXPECT_EQ(j["permits"][1]["expires_at_ms"], now + 60'000);
  EXPECT_GT(j["permits"][1]["expires_in_ms"].get<std::int64_t>(), 50'000);
  EXPECT_EQ(j["permits"][2]["id"], "01010101010101010101010101010101");
  EXPECT_TRUE(j["permits"][2]["expires_at_ms"].is_null());
  EXPECT_TRUE(j["permits"][2]["expires_in_ms"].is_null());

  auto text = run({"status", "pool"});
  EXPECT_EQ(text.code, 0) << text.err;
  for (const char* says : {"pool: permit-expirable semaphore, 1 permit available, 3 taken",
                           "01010101010101010101010101010101 never",
                           "00ff102030405060708090a0b0c0d0ef in ", "expired "}) {
    EXPECT_NE(text.out.find(says), std::string::npos) << says << "\n" << text.out;
  }
  // 60 s less the time since it was written, to a tenth: 60.0 when status ran within 50 ms.
  const auto in = text.out.find("00ff102030405060708090a0b0c0d0ef in ");
  if (in != std::string::npos) {
    const double left = std::stod(text.out.substr(in + 36));
    EXPECT_GE(left, 50.0) << text.out;
    EXPECT_LE(left, 60.0) << text.out;
  }
  // 5 s and the time since it was written: 5.x within the first second, more on a loaded
  // machine (the whole suite beside it once made this test take 2 s).
  const auto expired = text.out.find("expired ");
  if (expired != std::string::npos) {
    const double ago = std::stod(text.out.substr(expired + 8));
    EXPECT_GE(ago, 5.0) << text.out;
    EXPECT_LE(ago, 5.0 + double(now_ms() - now) / 1000.0 + 0.1) << text.out;
  }
  // Reading changed nothing: the expired permit is still there.
  EXPECT_EQ(raw_.command({"ZCARD", "{pool}:timeout"}).integer, 3);
  EXPECT_EQ(raw_.command({"GET", "pool"}).str, "1");
  // And it is no lock: unlock --force refuses it, leaving it as it is.
  auto unlock = run({"unlock", "--force", "pool"});
  EXPECT_EQ(unlock.code, 2);
  // Named as status names it, with the way to give a stuck permit back (issue 31).
  EXPECT_NE(unlock.err.find("'pool' is a permit-expirable semaphore, not a lock; give a stuck "
                            "permit back with `relock semaphore release pool PERMIT`"),
            std::string::npos)
      << unlock.err;
  EXPECT_EQ(lines(unlock.err), 1u) << unlock.err;
  EXPECT_EQ(raw_.command({"ZCARD", "{pool}:timeout"}).integer, 3);
}

// A semaphore with no permit out, or a latch: a string holding an integer, and nothing tells
// which. Status shows the value and says so.
TEST_F(cli_semaphore, status_shows_a_counters_value) {
  relock::client c(settings_for(server_));
  ASSERT_TRUE(c.count_down_latch("latch").try_set_count(3));
  ASSERT_TRUE(c.semaphore("sem").try_set_permits(4));
  c.count_down_latch("latch").count_down();
  auto text = run({"status", "latch"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("latch: counter, value 2 (a semaphore's available permits or a "
                          "count-down latch's count: the data cannot tell which)"),
            std::string::npos)
      << text.out;
  auto j = json::parse(run({"--json", "status", "sem"}).out);
  EXPECT_EQ(j["kind"], "counter");
  EXPECT_EQ(j["value"], 4);
  EXPECT_FALSE(j["node"].get<std::string>().empty());
}

}  // namespace cli_semaphore_test
