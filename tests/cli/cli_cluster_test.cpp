// SPDX-License-Identifier: Apache-2.0
// The relock binary on a Redis Cluster (the shared fixture, tests/support/redis_cluster.hpp):
// run, status, unlock --force and demo with a redis-cluster:// URL, given by --url or by
// $RELOCK_URL; status names the master of the name's slot; demo --cluster with no URL starts a
// private cluster and stops it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "cli_process.hpp"
#include "support/redis_cluster.hpp"
#include "support/temp_dir.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;

namespace {

// A command that says it holds (touches `here`) and holds until `leave` exists.
std::vector<std::string> hold_until(const std::string& here, const std::string& leave) {
  return {"sh", "-c", "touch \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.02; done", here, leave};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// "host:port" of each node in a redis-cluster:// URL.
std::vector<std::string> nodes_in(const std::string& url) {
  std::vector<std::string> nodes;
  std::string rest = url.substr(url.find("://") + 3);
  for (std::size_t comma; (comma = rest.find(',')) != std::string::npos;) {
    nodes.push_back(rest.substr(0, comma));
    rest.erase(0, comma + 1);
  }
  nodes.push_back(rest);
  return nodes;
}

// The program's path, as the shell would find it on $PATH; empty when it is not there.
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (std::size_t from = 0, colon = 0; colon != std::string::npos; from = colon + 1) {
    colon = dirs.find(':', from);
    const auto candidate = std::filesystem::path(dirs.substr(from, colon - from)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

class cli_cluster : public ::testing::Test {
 protected:
  void SetUp() override { cluster().restore(); }
  static redis_cluster& cluster() { return shared_cluster(); }

  static std::vector<std::string> with_url(std::vector<std::string> args) {
    args.insert(args.begin(), {"--url", cluster().seed_url()});
    return args;
  }
  static cli_result run(std::vector<std::string> args,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return run_cli(with_url(std::move(args)), timeout);
  }

  // A name (with `prefix`, and this process's PID: the cluster outlives the test) whose slot
  // `master` serves.
  static std::string name_on(const cluster_node& master, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string name = prefix + std::to_string(getpid()) + ":" + std::to_string(i);
      if (cluster().owner_of(name).port == master.port) return name;
    }
  }
  // The key `name` on the master that owns its slot.
  static bool stored(const std::string& name) {
    return cluster().client(cluster().owner_of(name)).command({"EXISTS", name}).integer == 1;
  }
  // Subscribers of `name`'s unlock channel (data-layout §2) over every master, by `verb`:
  // NUMSUB counts classic ones where they subscribed, SHARDNUMSUB sharded ones on the slot's
  // master.
  static long long listening(const std::string& name, const char* verb) {
    long long n = 0;
    for (const auto& node : cluster().masters()) {
      n += cluster()
               .client(node)
               .command({"PUBSUB", verb, "redisson_lock__channel:{" + name + "}"})
               .elements.at(1)
               .integer;
    }
    return n;
  }
  // A relock waiting for `name` has subscribed to its unlock channel, either way.
  static bool someone_waits_on(const std::string& name) {
    return listening(name, "NUMSUB") + listening(name, "SHARDNUMSUB") >= 1;
  }
  std::string file(const std::string& name) const { return (scratch_.path() / name).string(); }
  static bool appears(const std::string& file) {
    return wait_until([&] { return std::filesystem::exists(file); }, 10s);
  }

  temp_dir scratch_{"relock-cli-cluster"};
};

}  // namespace

TEST_F(cli_cluster, run_holds_the_name_on_its_master_and_a_second_run_waits_for_it) {
  const auto name = name_on(cluster().masters().at(1), "cli-run:");
  cli_process holder(with_url(concat({"run", name, "--"}, hold_until(file("in"), file("out")))));
  ASSERT_TRUE(appears(file("in"))) << holder.err();
  EXPECT_TRUE(stored(name));

  auto busy = run({"run", "-n", name, "--", "true"});
  EXPECT_EQ(busy.code, 1) << busy.err;
  cli_process second(with_url({"run", "-w", "30", name, "--", "touch", file("second")}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on(name); }, 10s)) << second.err();
  EXPECT_FALSE(second.wait(300ms)) << "the second run got in beside the first";
  const auto released = steady::now();
  std::ofstream(file("out")).put('\n');
  EXPECT_EQ(holder.wait(10s), 0) << holder.err();
  EXPECT_EQ(second.wait(10s), 0) << second.err();
  // Woken by the release's message, not by a 30 s lease.
  EXPECT_LT(steady::now() - released, 5s);
  EXPECT_TRUE(std::filesystem::exists(file("second")));
  EXPECT_FALSE(stored(name));
}

TEST_F(cli_cluster, the_cluster_url_may_come_from_relock_url) {
  const auto name = name_on(cluster().masters().at(2), "cli-env:");
  // The command asks relock status about its own lock, through the URL it inherits.
  auto r = run_cli({"run", name, "--", "sh", "-c", "exec \"$0\" --json status \"$RELOCK_NAME\"",
                    RELOCK_CLI_PATH},
                   30s, cli_options::with_env({{"RELOCK_URL", cluster().seed_url()}}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto status = json::parse(r.out);
  EXPECT_EQ(status["name"], name);
  EXPECT_EQ(status["locked"], true);
  EXPECT_EQ(status["node"], cluster().owner_of(name).address());
  EXPECT_FALSE(stored(name));
}

TEST_F(cli_cluster, status_names_the_master_that_owns_the_slot) {
  relock::config settings;
  settings.url = cluster().seed_url();
  relock::client holder(settings);
  for (const auto& master : cluster().masters()) {
    const auto name = name_on(master, "cli-status:");
    const auto owner = cluster().owner_of(name).address();
    ASSERT_EQ(owner, master.address());
    auto lock = holder.lock(name);
    lock.lock(30s);
    auto held = json::parse(run({"--json", "status", name}).out);
    EXPECT_EQ(held["node"], owner);
    EXPECT_EQ(held["locked"], true);
    ASSERT_EQ(held["holders"].size(), 1u);
    EXPECT_EQ(held["holders"][0]["owner"], lock.owner_field(relock::owner::current_thread()));
    auto text = run({"status", name});
    EXPECT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find(name + ": held, kind lock"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("\n  node " + owner + " ("), std::string::npos) << text.out;
    lock.unlock();
    auto free_lock = json::parse(run({"--json", "status", name}).out);
    EXPECT_EQ(free_lock["locked"], false);
    EXPECT_EQ(free_lock["node"], owner);  // a free name has a node too: its slot's
  }
}

TEST_F(cli_cluster, unlock_force_takes_the_lock_and_wakes_a_waiting_run) {
  const auto name = name_on(cluster().masters().at(0), "cli-unlock:");
  relock::config settings;
  settings.url = cluster().seed_url();
  relock::client holder(settings);
  holder.lock(name).lock(60s);
  cli_process waiting(with_url({"run", name, "--", "true"}));
  ASSERT_TRUE(wait_until([&] { return someone_waits_on(name); }, 10s)) << waiting.err();
  const auto forced = steady::now();
  auto r = run({"--json", "unlock", "--force", name});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["released"], true);
  EXPECT_EQ(waiting.wait(5s), 0) << waiting.err();
  EXPECT_LT(steady::now() - forced, 3s);  // woken by the unlock message, not by the lease
  auto again = run({"unlock", "--force", name});
  EXPECT_EQ(again.code, 1);  // nothing left to release
  EXPECT_NE(again.out.find("was not locked"), std::string::npos) << again.out;
  EXPECT_FALSE(stored(name));
}

TEST_F(cli_cluster, demo_on_the_cluster_ends_with_the_exact_count) {
  auto text = run({"demo", "--cluster", "--workers", "4", "--iterations", "50"}, 60s);
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("count 200 of 200: exact"), std::string::npos) << text.out;
  auto r = run({"--json", "demo", "--cluster", "--workers", "3", "--iterations", "20"}, 60s);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["count"], 60);
  EXPECT_EQ(j["acquisitions"], 60);
  EXPECT_EQ(j["private_server"], false);
  EXPECT_EQ(j["url"], cluster().seed_url());
  std::set<std::string> masters;
  for (const auto& m : cluster().masters()) masters.insert(m.address());
  EXPECT_TRUE(masters.contains(j["node"].get<std::string>())) << j["node"];
  // The demo cleans up after itself on every master.
  for (const auto& m : cluster().masters()) {
    EXPECT_TRUE(cluster().client(m).command({"KEYS", "relock-demo:*"}).elements.empty());
  }

  // --cluster with a URL that names one server is refused, in one line.
  auto single = run_cli({"--url", "redis://127.0.0.1:1", "demo", "--cluster"});
  EXPECT_EQ(single.code, 2);
  EXPECT_EQ(lines(single.err), 1u) << single.err;
  EXPECT_NE(single.err.find("redis-cluster://"), std::string::npos) << single.err;
}

TEST_F(cli_cluster, demo_cluster_without_a_url_starts_and_stops_a_private_cluster) {
  auto r = run_cli({"--json", "demo", "--cluster", "--workers", "2", "--iterations", "20"}, 120s,
                   cli_options::with_env({{"RELOCK_URL", ""}}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("started a private Redis Cluster (3 masters)"), std::string::npos) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["private_server"], true);
  EXPECT_EQ(j["count"], 40);
  const std::string url = j["url"];
  ASSERT_TRUE(url.starts_with("redis-cluster://")) << url;
  const auto nodes = nodes_in(url);
  ASSERT_EQ(nodes.size(), 3u) << url;
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), j["node"].get<std::string>()), nodes.end())
      << j["node"];
  for (const auto& node : nodes) {
    for (const auto& shared : cluster().nodes()) EXPECT_NE(node, shared.address());  // its own
    const auto port = static_cast<std::uint16_t>(std::stoi(node.substr(node.rfind(':') + 1)));
    EXPECT_THROW(raw_client("127.0.0.1", port, {}, {}, 1s), std::runtime_error) << node;  // stopped
  }
}

TEST_F(cli_cluster, demo_cluster_without_redis_cli_says_so_in_one_line) {
  // A PATH with redis-server only: the nodes start, and are stopped again when joining fails.
  const auto server = on_path("redis-server");
  ASSERT_FALSE(server.empty());
  std::filesystem::create_symlink(server, file("redis-server"));
  auto r = run_cli({"demo", "--cluster"}, 60s,
                   cli_options::with_env({{"RELOCK_URL", ""}, {"PATH", scratch_.path().string()}}));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no redis-cli on PATH"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(cli_cluster, pubsub_chooses_how_a_waiting_run_listens) {
  const auto master = cluster().masters().at(0);
  for (const auto& [mode, verb] :
       {std::pair{"classic", "NUMSUB"}, std::pair{"sharded", "SHARDNUMSUB"}}) {
    SCOPED_TRACE(mode);
    const auto name = name_on(master, std::string("cli-pubsub-") + mode + ":");
    const auto in = file(std::string(mode) + "-in"), out = file(std::string(mode) + "-out");
    // Both in the same mode: a classic waiter never hears a sharded release, and the reverse.
    cli_process holder(
        with_url(concat({"--pubsub", mode, "run", name, "--"}, hold_until(in, out))));
    ASSERT_TRUE(appears(in)) << holder.err();
    cli_process waiter(with_url({"--pubsub", mode, "run", "-w", "30", name, "--", "true"}));
    ASSERT_TRUE(wait_until([&] { return listening(name, verb) >= 1; }, 10s)) << waiter.err();
    std::ofstream(out).put('x');
    EXPECT_EQ(holder.wait(10s), 0);
    EXPECT_EQ(waiter.wait(5s), 0) << "the waiting run was not woken by the message";
  }
  auto bad = run({"--pubsub", "loud", "status", "x"});
  EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST_F(cli_cluster, doctor_checks_every_master_and_warns_of_a_node_timeout_above_the_lease) {
  // A lease of half the cluster's node timeout: a failover outlasts it.
  const auto timeout = std::stoll(cluster()
                                      .client(cluster().masters().at(0))
                                      .command({"CONFIG", "GET", "cluster-node-timeout"})
                                      .elements.at(1)
                                      .str);
  const auto lease = std::to_string(static_cast<double>(timeout) / 2000.0);
  const auto r = run({"--json", "doctor", "--lease", lease}, 60s);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  EXPECT_EQ(report["worst"], "warn");

  std::set<std::string> masters, timed, allowed;
  for (const auto& m : cluster().masters()) masters.insert(m.address());
  for (const auto& f : report["findings"]) {
    if (f["check"] == "cluster-node-timeout") {
      timed.insert(f["node"].get<std::string>());
      EXPECT_EQ(f["status"], "warn") << f.dump();
      EXPECT_EQ(f["value"].get<std::string>().rfind(
                    "cluster-node-timeout " + std::to_string(timeout) + " ms (lease ", 0),
                0u)
          << f.dump();
    }
    // relock's calls were tried on scratch names of each master's own slots.
    if (f["check"] == "acl" && f["status"] == "pass") allowed.insert(f["node"].get<std::string>());
  }
  EXPECT_EQ(timed, masters) << r.out;
  EXPECT_EQ(allowed, masters) << r.out;
  // No scratch name is left (an unlock latch may wait for its sweep, or its 20 s TTL).
  for (const auto& m : cluster().masters()) {
    for (const auto& k : cluster().client(m).command({"KEYS", "*relock-doctor*"}).elements) {
      EXPECT_EQ(k.str.rfind("redisson_unlock_latch:", 0), 0u) << k.str << " on " << m.address();
    }
  }
}
