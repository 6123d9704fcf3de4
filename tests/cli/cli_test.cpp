// The real relock binary against a real Redis (issue #4's list).
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <relock/client.hpp>

#include "cli_process.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

class cli : public ::testing::Test {
 protected:
  std::vector<std::string> with_url(std::vector<std::string> args) {
    args.insert(args.begin(), {"--url", server_.url()});
    return args;
  }
  cli_result run(std::vector<std::string> args, std::chrono::milliseconds timeout = 30s) {
    return run_cli(with_url(std::move(args)), timeout);
  }
  bool exists(const std::string& key) { return raw_.command({"EXISTS", key}).integer == 1; }
  bool someone_waits_on(const std::string& name) {
    return raw_.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}"})
               .elements.at(1)
               .integer >= 1;
  }
  static std::size_t lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace

TEST_F(cli, passes_the_exit_status_through_and_128_plus_signal) {
  EXPECT_EQ(run({"run", "st", "--", "sh", "-c", "exit 7"}).code, 7);
  EXPECT_EQ(run({"run", "st", "--", "sh", "-c", "kill -TERM $$"}).code, 128 + SIGTERM);
  EXPECT_EQ(run({"run", "st", "--", "sh", "-c", "test \"$RELOCK_NAME\" = st"}).code, 0);
  EXPECT_FALSE(exists("st"));
  auto missing = run({"run", "st", "--", "no-such-program-relock"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_EQ(lines(missing.err), 1u) << missing.err;
  EXPECT_FALSE(exists("st"));
}

TEST_F(cli, the_lock_is_held_while_the_command_runs) {
  auto r = run({"run", "held", "--", "sh", "-c", "exit 0"});
  EXPECT_EQ(r.code, 0);
  cli_process p(with_url({"run", "held", "--", "sleep", "30"}));
  ASSERT_TRUE(wait_until([&] { return exists("held"); }, 10s));
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(10s), 128 + SIGTERM);  // forwarded: sleep died of it
  EXPECT_FALSE(exists("held"));
}

TEST_F(cli, conflict_code_and_wait_timing_and_nonblock) {
  relock::client holder(settings_for(server_));
  holder.lock("busy").lock(60s);
  auto started = steady::now();
  auto waited = run({"run", "-w", "0.5", "busy", "--", "true"});
  auto took = steady::now() - started;
  EXPECT_EQ(waited.code, 1);
  EXPECT_EQ(lines(waited.err), 1u) << waited.err;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 5s);

  started = steady::now();
  auto nonblock = run({"run", "-n", "-E", "9", "busy", "--", "true"});
  EXPECT_EQ(nonblock.code, 9);
  EXPECT_LT(steady::now() - started, 3s);
  EXPECT_NE(nonblock.err.find("held by someone else"), std::string::npos) << nonblock.err;
}

TEST_F(cli, a_fixed_lease_that_runs_out_stops_the_command) {
  auto started = steady::now();
  auto r = run({"run", "--lease", "0.5", "short", "--", "sleep", "20"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("lease"), std::string::npos) << r.err;
  EXPECT_LT(steady::now() - started, 5s);
}

TEST_F(cli, the_watchdog_keeps_the_lock_past_its_timeout_while_the_command_runs) {
  cli_process p(with_url({"--watchdog-timeout", "1", "run", "kept", "--", "sleep", "2.5"}));
  ASSERT_TRUE(wait_until([&] { return exists("kept"); }, 10s));
  // Sampled over two watchdog timeouts: the key never lapses.
  auto until = steady::now() + 2s;
  while (steady::now() < until && !p.wait(0ms)) {
    EXPECT_TRUE(exists("kept"));
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(p.wait(10s), 0);
  EXPECT_FALSE(exists("kept"));
}

TEST_F(cli, a_lost_lock_terminates_the_command_with_a_distinct_code) {
  cli_process p(with_url({"--watchdog-timeout", "1", "run", "stolen", "--", "sleep", "30"}));
  ASSERT_TRUE(wait_until([&] { return exists("stolen"); }, 10s));
  raw_.command({"DEL", "stolen"});
  EXPECT_EQ(p.wait(10s), 3);
  EXPECT_NE(p.err().find("lost the lock"), std::string::npos) << p.err();
}

TEST_F(cli, status_as_text_and_json) {
  relock::client holder(settings_for(server_));
  auto lk = holder.lock("shown");
  lk.lock(30s);
  lk.lock(30s);
  auto text = run({"status", "shown"});
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("held"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(lk.owner_field(relock::owner::current_thread())), std::string::npos);

  auto json = run({"--json", "status", "shown"});
  ASSERT_EQ(json.code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["locked"], true);
  EXPECT_EQ(j["kind"], "lock");
  EXPECT_EQ(j["holders"][0]["holds"], 2);
  EXPECT_EQ(j["holders"][0]["owner"], lk.owner_field(relock::owner::current_thread()));
  EXPECT_GT(j["remaining_lease_ms"].get<int>(), 20'000);
  lk.unlock();
  lk.unlock();
  auto free_lock = nlohmann::json::parse(run({"--json", "status", "shown"}).out);
  EXPECT_EQ(free_lock["locked"], false);
}

TEST_F(cli, unlock_force_wakes_a_waiting_run) {
  relock::client holder(settings_for(server_));
  holder.lock("stuck").lock(60s);
  cli_process waiting(with_url({"run", "stuck", "--", "true"}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("stuck"); }, 10s));
  auto forced = steady::now();
  EXPECT_EQ(run({"unlock", "--force", "stuck"}).code, 0);
  EXPECT_EQ(waiting.wait(5s), 0);
  EXPECT_LT(steady::now() - forced, 3s);
  EXPECT_EQ(run({"unlock", "--force", "stuck"}).code, 1);  // nothing left to release
}

TEST_F(cli, demo_ends_with_the_exact_count) {
  auto r = run({"demo", "--workers", "4", "--iterations", "50"}, 60s);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("count 200 of 200"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(run({"--json", "demo", "--workers", "3", "--iterations", "20"}, 60s).out);
  EXPECT_EQ(j["count"], 60);
  EXPECT_EQ(j["expected"], 60);
}

TEST_F(cli, unreachable_redis_and_bad_input_give_exit_2_and_one_line) {
  std::uint16_t dead_port;
  {
    redis_server gone;
    dead_port = gone.port();
  }
  const std::string dead = "redis://127.0.0.1:" + std::to_string(dead_port);
  auto unreachable = run_cli({"--url", dead, "status", "x"});
  EXPECT_EQ(unreachable.code, 2);
  EXPECT_EQ(lines(unreachable.err), 1u) << unreachable.err;
  EXPECT_NE(unreachable.err.find(dead), std::string::npos) << unreachable.err;
  auto from_env = run_cli({"run", "x", "--", "true"}, 30s, {{"RELOCK_URL", dead}});
  EXPECT_EQ(from_env.code, 2);

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"run", "--bogus", "x", "--", "true"},
           {"run", "-w", "-1", "x", "--", "true"},
           {"run", "--lease", "0", "x", "--", "true"},
           {"status", ""},
           {"run", "--kind", "fair", "x", "--", "true"},
           {"unlock", "x"},
           {"nosuchcommand"}}) {
    auto r = run(bad);
    EXPECT_EQ(r.code, 2) << bad[0] << " " << bad[1];
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
  EXPECT_NE(run({"run", "--kind", "fair", "x", "--", "true"}).err.find("not yet available"),
            std::string::npos);
}
