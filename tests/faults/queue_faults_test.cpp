// SPDX-License-Identifier: Apache-2.0
// The blocking and delayed queues under faults, one kind per case: connections reset by the
// fault proxy, CLIENT KILL of every client connection, and graceful server restarts with
// persistence (AOF). Producers offer uniquely numbered values, half straight to the blocking
// queue and half through the delayed queue (a few hundred ms ahead), while consumers take them
// with waiting polls (BLPOP); both clients run the delayed queue's transfer. Then the queue is
// drained and every value is counted:
// - none is taken twice, and none is taken that was never offered;
// - every value whose offer was acknowledged is taken, except those lost at the documented
//   BLPOP edge (README, "Queues": an element the server popped for a BLPOP whose reply the
//   broken connection lost), which are counted and bounded by the connections broken: at most
//   one per consumer per fault.
// An offer that failed (no answer: it may or may not have run) may be taken once or not at all.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "support/fault_proxy.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

constexpr int producers = 2;
constexpr int consumers = 3;
constexpr std::int64_t max_backlog = 500;

struct figures {
  int faults = 0;
  std::int64_t offered = 0, acknowledged = 0, indeterminate = 0, delayed = 0;
  std::int64_t taken = 0, taken_twice = 0, never_offered = 0;
  std::int64_t lost = 0;                 // acknowledged, never taken
  std::int64_t indeterminate_taken = 0;  // failed offers that ran after all
  int put_back_failures = 0;             // relock's log: a give-back LPUSH that failed
  std::int64_t backlog = 0;              // elements in the queue when the producers stopped
  std::int64_t drain_ms = 0;             // how long the consumers took to empty it
};

std::ostream& operator<<(std::ostream& out, const figures& f) {
  return out << "faults " << f.faults << ", offered " << f.offered << " (" << f.delayed
             << " delayed), acknowledged " << f.acknowledged << ", failed " << f.indeterminate
             << " (taken after all " << f.indeterminate_taken << "), taken " << f.taken
             << ", taken twice " << f.taken_twice << ", never offered " << f.never_offered
             << ", lost " << f.lost << ", put-back failures " << f.put_back_failures
             << ", backlog at the end " << f.backlog << " drained in " << f.drain_ms << " ms";
}

// One run: the server (AOF, so a graceful restart keeps the queue), the proxy, the clients,
// the producers and consumers, and `fault` applied every 1-1.5 s for `how_long`.
class queue_run {
 public:
  queue_run()
      : server_({.extra_config = {"appendonly yes", "appendfsync no"}}),
        proxy_(server_.host(), server_.port()) {}

  figures run(const std::function<void(redis_server&, fault_proxy&)>& fault,
              std::chrono::seconds how_long) {
    relock::config c;
    c.url = "redis://127.0.0.1:" + std::to_string(proxy_.port());
    c.command_timeout = 500ms;
    c.log = [this](relock::log_level, std::string_view text) {
      if (text.find("could not be put back") != std::string_view::npos) ++put_back_failures_;
      std::lock_guard lock(log_mutex_);
      if (log_.size() < 40) log_.emplace_back(text);
    };
    relock::client producing(c), consuming(c);
    const std::string dest = "fault-queue";
    auto queue_in = producing.blocking_queue(dest);
    auto delayed_in = producing.delayed_queue(dest);
    auto queue_out = consuming.blocking_queue(dest);
    auto delayed_out = consuming.delayed_queue(dest);  // a second transfer beside the first

    std::atomic<bool> producing_on{true}, consuming_on{true};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        std::mt19937 rng(static_cast<unsigned>(p + 1));
        for (int n = 0; producing_on; ++n) {
          // The run judges loss, not speed: on a slow shared machine the consumers' client
          // (a BLPOP and its CLIENT ID per element, and the transfer) falls behind producers
          // that only write, so they wait while the queue holds more than `max_backlog`.
          while (producing_on && offers_ - takes_ > max_backlog) {
            std::this_thread::sleep_for(1ms);
          }
          const std::string value = "p" + std::to_string(p) + "-" + std::to_string(n);
          const bool delayed = n % 2 == 1;
          try {
            if (delayed) {
              delayed_in.offer(value, std::chrono::milliseconds(rng() % 300));
            } else {
              queue_in.offer(value);
            }
            note_offer(value, delayed, true);
          } catch (const relock::error&) {
            note_offer(value, delayed, false);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 4));
        }
      });
    }
    for (int k = 0; k < consumers; ++k) {
      threads.emplace_back([&] {
        while (consuming_on) {
          try {
            if (auto v = queue_out.poll(300ms)) note_taken(*v);
          } catch (const relock::error&) {
            std::this_thread::sleep_for(10ms);  // the server is away: the poll said so
          }
        }
      });
    }

    std::mt19937 rng(7);
    int faults = 0;
    const auto end = std::chrono::steady_clock::now() + how_long;
    while (std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000 + rng() % 500));
      fault(server_, proxy_);
      ++faults;
    }
    producing_on = false;
    for (int p = 0; p < producers; ++p) threads[static_cast<std::size_t>(p)].join();
    drain();
    consuming_on = false;
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    return count(faults);
  }

 private:
  void note_offer(const std::string& value, bool delayed, bool acknowledged) {
    std::lock_guard lock(mutex_);
    (acknowledged ? acknowledged_ : failed_).insert(value);
    ++offers_;
    delayed_ += delayed ? 1 : 0;
  }

  void note_taken(const std::string& value) {
    std::lock_guard lock(mutex_);
    ++taken_[value];
    ++takes_;
  }

  // Until every acknowledged value is taken, or the queue's keys stay empty for 1.5 s (what is
  // missing then is lost). A backlog left by producers faster than the consumers (a slow,
  // shared machine) may take long to drain: the consumers fail only when they stop taking for
  // 10 s while the queue still holds elements.
  void drain() {
    raw_client admin = raw_client::to(server_);
    const auto started = std::chrono::steady_clock::now();
    backlog_ = admin.command({"LLEN", "fault-queue"}).integer +
               admin.command({"ZCARD", "redisson_delay_queue_timeout:{fault-queue}"}).integer;
    auto empty_since = started;
    auto progress_at = started;
    std::size_t taken_before = 0;
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      drain_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count();
      {
        std::lock_guard lock(mutex_);
        bool all = true;
        for (const auto& v : acknowledged_) all = all && taken_.contains(v);
        if (all) return;
        if (taken_.size() != taken_before) progress_at = now;
        taken_before = taken_.size();
      }
      const bool empty =
          admin
              .command({"EXISTS", "fault-queue", "redisson_delay_queue:{fault-queue}",
                        "redisson_delay_queue_timeout:{fault-queue}"})
              .integer == 0;
      if (!empty) empty_since = now;
      if (now - empty_since > 1500ms) return;
      if (now - progress_at > 10s) break;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "the consumers took nothing for 10 s from a queue that is not empty; "
                  << where_they_are(admin);
  }

  // Why a queue did not drain: where its elements sit, and what relock logged.
  std::string where_they_are(raw_client& admin) {
    std::ostringstream out;
    const auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    out << "list " << admin.command({"LLEN", "fault-queue"}).integer << ", delayed list "
        << admin.command({"LLEN", "redisson_delay_queue:{fault-queue}"}).integer << ", due set "
        << admin.command({"ZCARD", "redisson_delay_queue_timeout:{fault-queue}"}).integer;
    const auto first = admin.command(
        {"ZRANGE", "redisson_delay_queue_timeout:{fault-queue}", "0", "0", "WITHSCORES"});
    if (first.elements.size() == 2) {
      out << ", earliest due " << first.elements[1].str << " (now " << wall_ms << ")";
    }
    std::lock_guard lock(log_mutex_);
    out << "; relock logged " << log_.size() << " line(s):";
    for (const auto& line : log_) out << "\n  " << line;
    return out.str();
  }

  figures count(int faults) {
    std::lock_guard lock(mutex_);
    figures f;
    f.faults = faults;
    f.acknowledged = static_cast<std::int64_t>(acknowledged_.size());
    f.indeterminate = static_cast<std::int64_t>(failed_.size());
    f.offered = f.acknowledged + f.indeterminate;
    f.delayed = delayed_;
    for (const auto& [value, times] : taken_) {
      f.taken += times;
      if (times > 1) f.taken_twice += times - 1;
      if (!acknowledged_.contains(value) && !failed_.contains(value)) ++f.never_offered;
      if (failed_.contains(value)) ++f.indeterminate_taken;
    }
    for (const auto& v : acknowledged_) f.lost += taken_.contains(v) ? 0 : 1;
    f.put_back_failures = put_back_failures_;
    f.backlog = backlog_;
    f.drain_ms = drain_ms_;
    return f;
  }

  redis_server server_;
  fault_proxy proxy_;
  std::mutex mutex_;
  std::set<std::string> acknowledged_, failed_;
  std::map<std::string, int> taken_;
  std::int64_t delayed_ = 0;
  std::int64_t backlog_ = 0, drain_ms_ = 0;
  std::atomic<std::int64_t> offers_{0}, takes_{0};  // for the producers' back-pressure
  std::atomic<int> put_back_failures_{0};
  std::mutex log_mutex_;
  std::vector<std::string> log_;  // relock's first log lines, for a failure's message
};

void expect_counted(const figures& f, const char* kind) {
  std::cout << kind << ": " << f << std::endl;
  EXPECT_EQ(f.taken_twice, 0) << kind;
  EXPECT_EQ(f.never_offered, 0) << kind;
  // The documented edge only: one popped element per consumer whose BLPOP a fault cut.
  EXPECT_LE(f.lost, static_cast<std::int64_t>(f.faults) * consumers) << kind;
  EXPECT_GT(f.taken, 500) << kind << ": too little traffic to judge";
}

}  // namespace

TEST(faults_queues, connections_reset_by_the_proxy_lose_nothing_but_the_blpop_edge) {
  queue_run run;
  const figures f = run.run([](redis_server&, fault_proxy& proxy) { proxy.reset_all(); }, 12s);
  expect_counted(f, "proxy_reset");
}

TEST(faults_queues, client_kill_of_every_connection_loses_nothing_but_the_blpop_edge) {
  queue_run run;
  const figures f = run.run(
      [](redis_server& server, fault_proxy&) {
        raw_client admin = raw_client::to(server);
        admin.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
        admin.command({"CLIENT", "KILL", "TYPE", "pubsub"});
      },
      12s);
  expect_counted(f, "client_kill");
}

TEST(faults_queues, graceful_restarts_with_aof_lose_nothing_but_the_blpop_edge) {
  queue_run run;
  const figures f = run.run(
      [](redis_server& server, fault_proxy&) {
        server.stop();  // SIGTERM: the AOF is flushed, the queue survives
        server.start();
      },
      12s);
  expect_counted(f, "restart");
}
