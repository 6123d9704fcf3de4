// SPDX-License-Identifier: Apache-2.0
// `relock run -s` / `-x`: the read-write lock NAME across processes, as flock's shared and
// exclusive locks are on one host; status and unlock --force on it.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using nlohmann::json;

namespace {

// A command that says it holds (touches `here`) and holds until `leave` exists.
std::vector<std::string> hold_until(const std::string& here, const std::string& leave) {
  return {"sh", "-c", "touch \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.02; done", here, leave};
}

bool someone_waits_on_rw(raw_client& raw, const std::string& name) {
  auto r = raw.command({"PUBSUB", "NUMSUB", "redisson_rwlock:{" + name + "}"});
  return r.elements.at(1).integer >= 1;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_F(cli, readers_in_several_processes_hold_at_once_and_a_writer_waits_for_all) {
  std::vector<std::unique_ptr<cli_process>> readers;
  for (int i = 0; i < 3; ++i) {
    const auto n = std::to_string(i);
    readers.push_back(std::make_unique<cli_process>(
        with_url(concat({"run", "-s", "doc", "--"}, hold_until(file("in" + n), file("out" + n))))));
  }
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(appears(file("in" + std::to_string(i))));  // together

  const auto wrote = file("wrote");
  cli_process writer(with_url({"run", "-x", "-w", "30", "doc", "--", "touch", wrote}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on_rw(raw_, "doc"); }, 10s));
  std::ofstream(file("out0")).put('\n');
  std::ofstream(file("out1")).put('\n');
  EXPECT_EQ(readers[0]->wait(10s), 0);
  EXPECT_EQ(readers[1]->wait(10s), 0);
  EXPECT_FALSE(writer.wait(300ms)) << "the writer got in beside a reader";
  const auto last_left = std::chrono::steady_clock::now();
  std::ofstream(file("out2")).put('\n');
  EXPECT_EQ(readers[2]->wait(10s), 0);
  EXPECT_EQ(writer.wait(10s), 0) << writer.err();
  // Woken by the last release's message, not by a 30 s lease.
  EXPECT_LT(std::chrono::steady_clock::now() - last_left, 5s);
  EXPECT_TRUE(std::filesystem::exists(wrote));
  EXPECT_FALSE(exists("doc"));
}

TEST_F(cli, a_killed_reader_frees_its_share_while_another_keeps_reading) {
  // Reader A dies by SIGKILL (its command with it); reader B keeps renewing its own share. B's
  // renewals must not keep A's share alive (Redisson #1458): once B leaves, a writer gets in
  // within A's lease.
  cli_process a(with_url({"--watchdog-timeout", "2", "run", "-s", "pair", "--", "sh", "-c",
                          "touch \"$0\"; exec sleep 60", file("a")}));
  cli_process b(with_url(concat({"--watchdog-timeout", "2", "run", "-s", "pair", "--"},
                                hold_until(file("b"), file("b-out")))));
  ASSERT_TRUE(appears(file("a")));
  ASSERT_TRUE(appears(file("b")));
  a.signal(SIGKILL);
  a.wait(5s);
  const auto killed = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(2500ms);  // longer than A's lease: B renews meanwhile (not a wait
                                        // for an outcome: the span the test is about)
  std::ofstream(file("b-out")).put('\n');
  EXPECT_EQ(b.wait(10s), 0);
  auto w = run({"run", "-x", "-w", "10", "pair", "--", "true"}, 20s);
  EXPECT_EQ(w.code, 0) << w.err;
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 2s + 2500ms + 3s);
}

TEST_F(cli, status_shows_the_mode_and_both_sides_and_unlock_force_stops_the_holder) {
  cli_process reader(with_url(concat(
      {"run", "-s", "view", "--"}, {"sh", "-c", "touch \"$0\"; exec sleep 60", file("reading")})));
  ASSERT_TRUE(appears(file("reading")));
  auto status = json::parse(run({"--json", "status", "view"}).out);
  EXPECT_EQ(status["kind"], "read-write");
  EXPECT_EQ(status["mode"], "read");
  ASSERT_EQ(status["holders"].size(), 1u);
  EXPECT_EQ(status["holders"][0]["side"], "read");
  ASSERT_EQ(status["holders"][0]["read_leases_ms"].size(), 1u);
  EXPECT_GT(status["holders"][0]["read_leases_ms"][0].get<std::int64_t>(), 20'000);
  const auto text = run({"status", "view"}).out;
  EXPECT_NE(text.find("read mode"), std::string::npos) << text;
  EXPECT_NE(text.find("leases "), std::string::npos) << text;

  auto forced = run({"unlock", "--force", "view"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  // The holder hears it at once through the read-write lock's channel.
  EXPECT_EQ(reader.wait(5s), 3) << reader.err();
  EXPECT_FALSE(exists("view"));
  EXPECT_EQ(raw_.command({"KEYS", "*view*"}).elements.size(), 0u) << "timeout keys left behind";
}

TEST_F(cli, a_writer_that_gives_up_names_the_readers_that_hold_it) {
  std::vector<std::unique_ptr<cli_process>> readers;
  for (int i = 0; i < 2; ++i) {
    const auto n = std::to_string(i);
    readers.push_back(std::make_unique<cli_process>(with_url(
        concat({"run", "-s", "shared", "--"}, hold_until(file("r-in" + n), file("r-out" + n))))));
  }
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(appears(file("r-in" + std::to_string(i))));
  auto r = run({"run", "-x", "-n", "shared", "--", "true"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("'shared' is held by 2 readers ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("another owner"), std::string::npos) << r.err;
  for (int i = 0; i < 2; ++i) std::ofstream(file("r-out" + std::to_string(i))).put('\n');
  for (auto& reader : readers) EXPECT_EQ(reader->wait(10s), 0);
}
