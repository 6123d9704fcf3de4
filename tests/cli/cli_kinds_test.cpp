// SPDX-License-Identifier: Apache-2.0
// `relock run --kind fair|fenced|spin`, and status and unlock --force on those kinds: the real
// binary against a real Redis, with the library (another process's view) as the other party.
#include <asio/use_future.hpp>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <relock/client.hpp>
#include <sstream>

#include "cli_fixture.hpp"
#include "support/client_settings.hpp"
#include "support/command_stats.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;

namespace {

class cli_kinds : public cli {
 protected:
  // Waiters queued for the fair lock `name`, head first (data-layout §3).
  std::int64_t queue_length(const std::string& name) {
    return raw_.command({"LLEN", "redisson_lock_queue:{" + name + "}"}).integer;
  }
  // Lua scripts the server has run so far: every try of every lock is one.
  std::int64_t scripts_run() { return scripts_answered(raw_); }
  static std::string contents(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace

TEST_F(cli_kinds, fair_runs_get_the_lock_in_the_order_they_queued) {
  relock::client holder(settings_for(server_));
  auto fair = holder.fair_lock("line");
  fair.lock(60s);
  EXPECT_EQ(run({"run", "--kind", "fair", "-n", "line", "--", "true"}).code, 1);
  EXPECT_EQ(queue_length("line"), 0) << "-n tries once and never queues";

  const auto order = file("order");
  const auto in_line = [&](const std::string& who) {
    return std::make_unique<cli_process>(with_url(
        {"run", "--kind", "fair", "line", "--", "sh", "-c", "echo \"$1\" >> \"$0\"", order, who}));
  };
  auto first = in_line("first");
  ASSERT_TRUE(wait_until([&] { return queue_length("line") == 1; }, 10s));
  auto second = in_line("second");
  ASSERT_TRUE(wait_until([&] { return queue_length("line") == 2; }, 10s));

  fair.unlock();
  EXPECT_EQ(first->wait(10s), 0) << first->err();
  EXPECT_EQ(second->wait(10s), 0) << second->err();
  EXPECT_EQ(contents(order), "first\nsecond\n");
  EXPECT_FALSE(exists("line"));
  EXPECT_EQ(queue_length("line"), 0);
}

TEST_F(cli_kinds, fenced_runs_get_ever_higher_tokens_in_relock_token) {
  relock::client holder(settings_for(server_));
  auto fenced = holder.fenced_lock("fence");
  const std::int64_t holders_token = fenced.lock_and_get_token();
  const std::vector<std::string> print_token{"--", "sh", "-c", "echo \"$RELOCK_TOKEN\""};
  const auto fenced_run = [&](std::vector<std::string> flags) {
    std::vector<std::string> args{"run", "--kind", "fenced"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("fence");
    args.insert(args.end(), print_token.begin(), print_token.end());
    return with_url(args);
  };

  // Waiting for ever (the library's lock_and_get_token path) behind the library's hold.
  cli_process waiting(fenced_run({}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on("fence"); }, 10s));
  fenced.unlock();
  ASSERT_EQ(waiting.wait(10s), 0) << waiting.err();
  std::vector<std::int64_t> tokens{holders_token, std::stoll(waiting.out())};

  // At once (-n) and within --wait (the try_lock_and_get_token path); an outer token in the
  // environment is replaced by this acquisition's.
  for (const auto& flags : std::vector<std::vector<std::string>>{{"-n"}, {"-w", "5"}}) {
    auto r = run_cli(fenced_run(flags), 30s, cli_options::with_env({{"RELOCK_TOKEN", "999999"}}));
    ASSERT_EQ(r.code, 0) << r.err;
    tokens.push_back(std::stoll(r.out));
  }
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    EXPECT_GT(tokens[i], tokens[i - 1]) << "token " << i;
  }
  EXPECT_LT(tokens.back(), 999999);

  auto status = json::parse(run({"--json", "status", "fence"}).out);
  EXPECT_EQ(status["kind"], "fenced");
  EXPECT_EQ(status["locked"], false);
  EXPECT_EQ(status["fencing_token"], tokens.back());
  const auto text = run({"status", "fence"}).out;
  EXPECT_NE(text.find("last fencing token " + std::to_string(tokens.back())), std::string::npos)
      << text;
}

TEST_F(cli_kinds, a_spin_run_polls_past_a_held_reentrant_lock_without_pub_sub) {
  relock::client holder(settings_for(server_));
  auto lock = holder.lock("spun");
  lock.lock(60s);
  EXPECT_EQ(run({"run", "--kind", "spin", "-n", "spun", "--", "true"}).code, 1);

  const auto ran = file("ran");
  const auto tries_before = scripts_run();
  cli_process spinner(with_url({"run", "--kind", "spin", "spun", "--", "touch", ran}));
  // It tries again and again, and listens on no channel meanwhile.
  ASSERT_TRUE(wait_until([&] { return scripts_run() >= tries_before + 5; }, 10s));
  EXPECT_FALSE(someone_waits_on("spun")) << "a spin lock's waiter subscribed";
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the command ran beside the library's hold";

  const auto released = steady::now();
  lock.unlock();
  EXPECT_EQ(spinner.wait(10s), 0) << spinner.err();
  EXPECT_LT(steady::now() - released, 3s) << "its next try, not the 60 s lease, let it in";
  EXPECT_TRUE(std::filesystem::exists(ran));
  EXPECT_FALSE(exists("spun"));
}

TEST_F(cli_kinds, status_lists_a_fair_locks_waiters_in_order_with_their_deadlines) {
  relock::client holder(settings_for(server_));
  auto fair = holder.fair_lock("queue");
  fair.lock(60s);
  relock::client others(settings_for(server_));
  auto theirs = others.fair_lock("queue");
  const auto first = relock::owner::unique(), second = relock::owner::unique();
  auto first_done = theirs.async_lock(first, {}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return queue_length("queue") == 1; }, 10s));
  auto second_done = theirs.async_lock(second, {}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return queue_length("queue") == 2; }, 10s));

  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const auto asked = now_ms();
  auto status = json::parse(run({"--json", "status", "queue"}).out);
  const auto answered = now_ms();
  EXPECT_EQ(status["kind"], "fair");
  EXPECT_EQ(status["locked"], true);
  const auto& queue = status["queue"];
  ASSERT_EQ(queue.size(), 2u) << status.dump();
  EXPECT_EQ(queue[0]["owner"], theirs.owner_field(first));
  EXPECT_EQ(queue[1]["owner"], theirs.owner_field(second));
  // A deadline is a queue timeout (5 min) past the holder's lease, or past the deadline of the
  // waiter before; the time left is counted from when status looked.
  const std::int64_t first_at = queue[0]["gives_up_at_ms"], second_at = queue[1]["gives_up_at_ms"];
  EXPECT_GT(first_at, answered + 300'000);
  EXPECT_GE(second_at - first_at, 300'000);
  for (const auto& waiter : queue) {
    const std::int64_t at = waiter["gives_up_at_ms"], in = waiter["gives_up_in_ms"];
    EXPECT_GE(in, at - answered);
    EXPECT_LE(in, at - asked);
  }

  const auto text = run({"status", "queue"}).out;
  const auto first_line = text.find(" 1. " + theirs.owner_field(first));
  const auto second_line = text.find(" 2. " + theirs.owner_field(second));
  ASSERT_NE(first_line, std::string::npos) << text;
  ASSERT_NE(second_line, std::string::npos) << text;
  EXPECT_LT(first_line, second_line) << text;
  for (const auto at : {first_line, second_line}) {
    const auto line = text.substr(at, text.find('\n', at) - at);
    EXPECT_NE(line.find("deadline "), std::string::npos) << line;
    EXPECT_NE(line.find(", in "), std::string::npos) << line;
  }
}

TEST_F(cli_kinds, unlock_force_on_a_fair_lock_tells_the_queued_run_at_once) {
  relock::client holder(settings_for(server_));
  holder.fair_lock("jam").lock(60s);
  const auto ran = file("ran");
  cli_process waiting(with_url({"run", "--kind", "fair", "jam", "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return queue_length("jam") == 1; }, 10s));

  const auto forced = steady::now();
  auto r = run({"--json", "unlock", "--force", "jam"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["released"], true);
  EXPECT_EQ(waiting.wait(10s), 0) << waiting.err();
  // Told on its own channel as the head of the queue, not woken by the holder's 60 s lease.
  EXPECT_LT(steady::now() - forced, 3s);
  EXPECT_TRUE(std::filesystem::exists(ran));
  EXPECT_EQ(queue_length("jam"), 0);
}

TEST_F(cli_kinds, an_unknown_kind_is_a_usage_error_and_help_names_every_kind) {
  auto r = run({"run", "--kind", "mutex", "k", "--", "true"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--kind"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("k"));

  const auto help = run_cli({"run", "--help"}).out;
  for (const char* kind : {"lock", "fair", "fenced", "spin", "read", "write", "RELOCK_TOKEN"}) {
    EXPECT_NE(help.find(kind), std::string::npos) << kind;
  }
}
