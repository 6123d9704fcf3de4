// SPDX-License-Identifier: Apache-2.0
// The fault suite on one Redis server: worker processes take fenced and plain locks over a few
// names through a TCP fault proxy while a nemesis injects every local fault on a schedule;
// the checker then judges the whole history (HISTORY.md). Then a handoff run with the pub/sub
// connections killed every 100 handoffs, judged with no fault to excuse a lost wake-up.
//
// RELOCK_FAULTS_TOKENS sets how many fenced grants the main run lasts (default below); the
// figures are printed.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/busy_script.hpp"
#include "support/fault_proxy.hpp"
#include "support/fault_run.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

// "At least 50,000 fenced acquisitions": tokens handed out, a few of which a lost reply or a
// rollback leaves unused. RELOCK_FAULTS_TOKENS changes it; the run stops at 420 s regardless.
// Under ASan, in ./scripts/test, 300 s came close: two loaded runs judged 47,813 and 49,728
// fenced acquisitions in them, and a loaded run judged 48,890 in 360 s. The count ends the run
// first whenever it can.
std::int64_t wanted_tokens() {
  const char* s = std::getenv("RELOCK_FAULTS_TOKENS");
  return s ? std::atoll(s) : 55'000;
}

std::vector<std::string> lock_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("fault-n" + std::to_string(i));
  return names;
}

// The lock server: persistence that survives a graceful restart (AOF, flushed at shutdown),
// DEBUG for DEBUG SLEEP, a script running past 100 ms makes others BUSY, and eviction takes
// only keys with a TTL (locks), never the fencing counters. No fsync: Redis writes the AOF
// before it answers, so a process restart finds every acknowledged write in the page cache,
// and a slow CI disk cannot stall the server behind an fsync (no fault logged would explain
// that stall).
redis_options lock_server_options() {
  return {.extra_config = {"appendonly yes", "appendfsync no", "enable-debug-command local",
                           "busy-reply-threshold 100", "maxmemory-policy volatile-lru"}};
}

void print_verdict(const verdict& v) {
  std::cout << v.output << std::endl;
  std::cout << "checker exit " << v.exit_code << std::endl;
}

// The nemesis of the single-server run: one fault at a time, a quiet gap after each.
class nemesis {
 public:
  nemesis(fault_run& run, redis_server& server, fault_proxy& proxy, worker_settings settings,
          std::vector<std::string> names)
      : run_(run),
        server_(server),
        proxy_(proxy),
        settings_(std::move(settings)),
        names_(std::move(names)),
        admin_(raw_client::to(server_)) {}

  // Runs faults until the fenced locks have handed out `tokens` tokens (or `cap` passes): nine
  // tenths of them, then the data-losing restart, then the last tenth in the new epoch.
  void run_for(std::int64_t tokens, std::chrono::seconds cap) {
    const std::vector<std::pair<const char*, std::function<void()>>> faults = {
        {"client_kill", [&] { client_kill(); }},
        {"client_pause", [&] { client_pause(); }},
        {"debug_sleep", [&] { debug_sleep(); }},
        {"busy_script", [&] { busy_script(); }},
        {"server_pause", [&] { server_pause(); }},
        {"pause", [&] { worker_pause(); }},
        {"kill", [&] { worker_kill(); }},
        {"restart", [&] { restart(); }},
        {"del", [&] { external("del"); }},
        {"pexpire", [&] { external("pexpire"); }},
        {"evict", [&] { evict(); }},
        {"proxy_delay", [&] { proxy_delay(); }},
        {"proxy_drop", [&] { proxy_drop(); }},
        {"proxy_blackhole", [&] { proxy_blackhole(); }},
        {"proxy_reset", [&] { proxy_reset(); }},
    };
    const std::int64_t end = ns_from_now(cap);
    std::vector<std::size_t> order(faults.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto until = [&](std::int64_t wanted, std::int64_t by) {
      while (tokens_handed_out() < wanted && monotonic_ns() < by) {
        std::shuffle(order.begin(), order.end(), rng_);
        for (std::size_t i : order) {
          if (tokens_handed_out() >= wanted || monotonic_ns() >= by) break;
          faults[i].second();
          ++counts_[faults[i].first];
          quiet();
        }
      }
    };
    until(tokens * 9 / 10, end - (end - monotonic_ns()) / 10);
    before_loss_ = tokens_handed_out();
    restart_losing_data();
    ++counts_["restart_no_persist"];
    until(tokens, end);
  }

  // The fencing counters' sum, and what they had reached before the data loss reset them.
  std::int64_t tokens_handed_out() {
    std::int64_t sum = before_loss_;
    for (const auto& n : names_) {
      auto r = admin({"GET", "redisson_lock_token:{" + n + "}"});
      if (r.is_string()) sum += std::stoll(r.str);
    }
    return sum;
  }

  const std::map<std::string, int>& counts() const { return counts_; }

 private:
  void quiet() { std::this_thread::sleep_for(std::chrono::milliseconds(pick(1500, 2500))); }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  relock::resp::reply admin(std::vector<std::string> args) {
    // A fault may have killed or restarted under us: one retry on a fresh connection.
    try {
      return admin_.command(args);
    } catch (const std::exception&) {
      return admin_.command(std::move(args));
    }
  }

  void client_kill() {
    static const char* types[] = {"normal", "pubsub"};
    const int which = pick(0, 2);  // normal, pubsub, or both
    run_.fault("start", "client_kill", "server");
    for (int t = 0; t < 2; ++t) {
      if (which == 2 || which == t) admin({"CLIENT", "KILL", "TYPE", types[t]});
    }
    run_.fault("end", "client_kill", "server");
  }

  void client_pause() {
    const int ms = pick(300, 900);
    run_.fault("start", "client_pause", "server");
    admin({"CLIENT", "PAUSE", std::to_string(ms), "ALL"});
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    run_.fault("end", "client_pause", "server");
  }

  void debug_sleep() {
    run_.fault("start", "debug_sleep", "server");
    admin({"DEBUG", "SLEEP", "0.6"});  // answers when the server wakes
    run_.fault("end", "debug_sleep", "server");
  }

  // A read-only script long past busy-reply-threshold: everyone else hears BUSY until the
  // nemesis kills it.
  void busy_script() {
    run_.fault("start", "busy_script", "server");
    {
      relock::test::busy_script busy(server_);
      std::this_thread::sleep_for(std::chrono::milliseconds(pick(300, 700)));
      busy.kill();
    }
    run_.fault("end", "busy_script", "server");
  }

  void server_pause() {
    run_.fault("start", "server_pause", "server");
    server_.pause();  // longer than the lease: holds expire, holders must know by then
    std::this_thread::sleep_for(
        std::chrono::milliseconds(pick(500, settings_.watchdog_lease_ms + 500)));
    server_.resume();
    run_.fault("end", "server_pause", "server");
  }

  std::optional<std::size_t> running_worker() {
    std::vector<std::size_t> up;
    for (std::size_t i = 0; i < run_.workers(); ++i) {
      if (run_.worker_running(i)) up.push_back(i);
    }
    if (up.empty()) return std::nullopt;
    return up[static_cast<std::size_t>(pick(0, static_cast<int>(up.size()) - 1))];
  }

  void worker_pause() {
    auto w = running_worker();
    if (!w) return;
    run_.pause_worker(*w);  // longer than the lease: it wakes up holding nothing
    std::this_thread::sleep_for(
        std::chrono::milliseconds(settings_.watchdog_lease_ms + pick(200, 1000)));
    run_.resume_worker(*w);
  }

  void worker_kill() {
    auto w = running_worker();
    if (!w) return;
    run_.kill_worker(*w);
    run_.start_worker(settings_);  // the load goes on
  }

  void restart() {
    run_.fault("start", "restart", "server");
    server_.stop();  // SIGTERM: the AOF is flushed, nothing is lost
    server_.start();
    run_.fault("end", "restart", "server");
  }

  void external(const char* how) {
    const std::string name =
        names_[static_cast<std::size_t>(pick(0, static_cast<int>(names_.size()) - 1))];
    // Logged before and after, as every fault: a hold granted between the log line and the
    // command loses its key too, and a fault only explains what it overlaps.
    run_.fault("start", how, "server", {name});
    if (std::string(how) == "del") {
      admin({"DEL", name});
    } else {
      admin({"PEXPIRE", name, "5"});
      std::this_thread::sleep_for(10ms);  // the key is gone by now
    }
    run_.fault("end", how, "server", {name});
  }

  void evict() {
    const auto info = admin({"INFO", "memory"}).str;
    const auto at = info.find("used_memory:");
    if (at == std::string::npos) return;
    const long long used = std::atoll(info.c_str() + at + 12);
    run_.fault("start", "evict", "server");
    admin({"CONFIG", "SET", "maxmemory", std::to_string(used - 4096)});
    std::this_thread::sleep_for(std::chrono::milliseconds(pick(100, 400)));
    admin({"CONFIG", "SET", "maxmemory", "0"});
    run_.fault("end", "evict", "server");
  }

  // A network fault through the proxy for a while, then the network heals.
  void proxy_fault(const char* kind, const std::function<void()>& begin, int lo_ms, int hi_ms) {
    run_.fault("start", kind, "server");
    begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(pick(lo_ms, hi_ms)));
    proxy_.pass();
    run_.fault("end", kind, "server");
  }

  void proxy_delay() {
    const auto by = std::chrono::milliseconds(pick(5, 60));
    proxy_fault(
        "proxy_delay", [&] { proxy_.delay(by); }, 500, 1500);
  }
  void proxy_drop() {
    proxy_fault(
        "proxy_drop", [&] { proxy_.drop_replies(); }, 300, 1000);
  }
  void proxy_blackhole() {
    proxy_fault(
        "proxy_blackhole", [&] { proxy_.blackhole(); }, 300, 1500);
  }

  void proxy_reset() {
    run_.fault("start", "proxy_reset", "server");
    proxy_.reset_all();
    run_.fault("end", "proxy_reset", "server");
  }

  // A crash that loses every key: the AOF goes with the process.
  void restart_losing_data() {
    // Its end is the old server's death: a grant the old server made until then falls inside it.
    run_.fault("start", "restart_no_persist", "server");
    server_.kill();
    run_.fault("end", "restart_no_persist", "server");
    std::filesystem::remove_all(server_.dir() / "appendonlydir");
    server_.start();
  }

  fault_run& run_;
  redis_server& server_;
  fault_proxy& proxy_;
  worker_settings settings_;
  std::vector<std::string> names_;
  raw_client admin_;
  std::mt19937 rng_{20261124};
  std::map<std::string, int> counts_;
  std::int64_t before_loss_ = 0;
};

}  // namespace

TEST(faults_single_server, every_fault_on_a_schedule_leaves_a_history_without_violations) {
  fault_run run("single");
  redis_server server(lock_server_options());
  fault_proxy proxy(server.host(), server.port());
  const auto names = lock_names(6);
  worker_settings settings;
  settings.url = "redis://127.0.0.1:" + std::to_string(proxy.port());
  settings.names = names;
  settings.wait_max_ms = 3000;  // waits long enough for a lost wake-up to show
  settings.fenced_percent = 90;
  settings.extra = {"writes_max=1", "hold_max_ms=1"};
  settings.until_ns = ns_from_now(450s);  // a bound; the nemesis stops them sooner
  settings.extra.push_back("stop_file=" + (run.dir() / "stop").string());
  // Half the workers reuse their threads' owners, as applications do (the default owner is the
  // calling thread): a take-back or release landing after the same owner's next grant would show
  // as an overlap.
  for (int i = 0; i < 4; ++i) {
    worker_settings one = settings;
    if (i % 2 == 1) one.extra.push_back("reuse_owners=1");
    run.start_worker(one);
  }

  nemesis chaos(run, server, proxy, settings, names);
  chaos.run_for(wanted_tokens(), 420s);
  run.stop_workers();
  const int stuck = run.wait_workers(20s);
  std::cout << "faults injected:";
  for (const auto& [kind, n] : chaos.counts()) std::cout << " " << kind << "=" << n;
  std::cout << "; workers started " << run.workers() << ", killed at the end " << stuck
            << std::endl;

  const verdict v = run.check(names, 1000);
  print_verdict(v);
  EXPECT_EQ(v.exit_code, 0) << "histories kept in " << run.dir();
  EXPECT_EQ(stuck, 0) << "a worker did not stop by its end time";
  // What the run must show: at least 50,000 fenced acquisitions judged.
  const auto at = v.json.find("\"fenced_acquisitions\": ");
  ASSERT_NE(at, std::string::npos) << v.json;
  EXPECT_GE(std::atoll(v.json.c_str() + at + 23), 50'000);
}

// "0 lost wake-ups over 10,000 handoffs with the pub/sub connections killed every 100
// handoffs". The kills are logged as notes, not faults, so none of them can excuse a waiter
// left sleeping on a free lock.
TEST(faults_single_server, no_lost_wake_up_over_ten_thousand_handoffs_with_pubsub_killed) {
  constexpr std::int64_t handoffs = 10'000;
  fault_run run("handoffs");
  redis_server server(lock_server_options());
  const std::vector<std::string> names = {"fault-handoff"};
  worker_settings settings;
  settings.url = server.url();
  settings.names = names;
  settings.fenced_percent = 100;
  settings.wait_max_ms = 5000;  // waiters are there at every release
  settings.until_ns = ns_from_now(240s);
  settings.extra = {"hold_max_ms=1", "stop_at_token=" + std::to_string(handoffs + 1)};
  for (int i = 0; i < 3; ++i) run.start_worker(settings);

  raw_client watcher = raw_client::to(server);
  const std::string counter = "redisson_lock_token:{fault-handoff}";
  std::int64_t next_kill = 100;
  int kills = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::int64_t token = 0; token <= handoffs;) {
    auto r = watcher.command({"GET", counter});
    token = r.is_nil() ? 0 : std::stoll(r.str);
    if (token >= next_kill) {
      watcher.command({"CLIENT", "KILL", "TYPE", "pubsub"});
      run.nemesis().append(0, event("note", "info").str("what", "pubsub_kill"));
      ++kills;
      next_kill = (token / 100 + 1) * 100;
    }
    bool any = false;
    for (std::size_t i = 0; i < run.workers(); ++i) any = any || run.worker_running(i);
    ASSERT_TRUE(any) << "every worker ended before " << handoffs << " handoffs (at " << token
                     << ")";
    std::this_thread::sleep_for(1ms);
  }
  const auto took = std::chrono::steady_clock::now() - started;
  const int stuck = run.wait_workers(10s);
  std::cout << handoffs << " handoffs in " << took / 1ms << " ms, pub/sub connections killed "
            << kills << " times" << std::endl;

  const verdict v = run.check(names, 500);
  print_verdict(v);
  EXPECT_EQ(v.exit_code, 0) << "histories kept in " << run.dir();
  EXPECT_EQ(stuck, 0);
}
