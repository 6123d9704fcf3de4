// A Sentinel deployment for tests: 1 master + 1 replica (redis_server) and 3 redis-sentinel
// processes watching them, on free loopback ports, each in a temp dir of its own. The tests of
// one process share one set (shared_sentinel_set): started once, stopped at exit.
//
// Shared means one test's failover is the next test's starting point, so a test calls restore()
// first: it resumes what was paused, restarts what was killed (as a replica of whoever is master
// now) and waits until the set is healthy again.
//
// Thread-safety: none; drive it from the test's main thread (servers die with the thread that
// started them, see server_process).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace relock::test {

struct sentinel_options {
  std::string master_name = "relock-master";
  // Low so failover tests are quick, yet above a loaded CI machine's pauses.
  std::chrono::milliseconds down_after{1'000};
  // A sentinel does not fail the same master over again within twice this: low, so a test
  // that kills the master right after another test's switchover is not held up.
  std::chrono::milliseconds failover_timeout{3'000};
  int sentinels = 3;
  int quorum = 2;
  std::string data_password{};      // requirepass + masterauth on the data nodes
  std::string sentinel_password{};  // requirepass on the sentinels
};

class sentinel_set {
 public:
  // Starts everything; returns once wait_healthy() passes. Throws std::runtime_error with the
  // logs' tails when it does not come up.
  explicit sentinel_set(sentinel_options options = {});
  ~sentinel_set();
  sentinel_set(const sentinel_set&) = delete;
  sentinel_set& operator=(const sentinel_set&) = delete;

  const sentinel_options& options() const { return options_; }
  // redis-sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/NAME, without credentials.
  std::string url() const;
  std::vector<std::uint16_t> sentinel_ports() const { return sentinel_ports_; }
  std::vector<std::uint16_t> data_ports() const;
  // The master as the first sentinel that answers names it now.
  std::uint16_t master_port() const;
  std::uint16_t replica_port() const;  // the other data node

  raw_client client(std::uint16_t data_port) const;
  raw_client sentinel(std::size_t i) const;

  // SENTINEL FAILOVER; returns the new master once every running sentinel names it and it says
  // ROLE master (the set is not healthy yet: the old master is still being demoted).
  std::uint16_t failover(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits until the sentinels name a master other than `old_master` and it says ROLE master.
  std::uint16_t wait_for_new_master(std::uint16_t old_master, std::chrono::milliseconds timeout);

  void kill(std::uint16_t data_port);
  // Runs a killed data node again (empty) as a replica of the current master.
  void restart(std::uint16_t data_port);
  void pause(std::uint16_t data_port);
  void resume(std::uint16_t data_port);
  void pause_sentinel(std::size_t i);
  void resume_sentinel(std::size_t i);
  bool running(std::uint16_t data_port);

  // Empty when every process runs, the sentinels agree on a master that says so and has the
  // other node online, that replica's link is up, every sentinel sees it healthy and the other
  // sentinels, and no failover is in progress. Otherwise the first problem.
  std::string health_problem() const;
  void wait_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(40)) const;
  // Resumes paused processes, restarts dead data nodes, waits until healthy.
  void restore(std::chrono::milliseconds timeout = std::chrono::seconds(40));

 private:
  redis_server& data(std::uint16_t port);
  const redis_server& data(std::uint16_t port) const;
  void start_sentinel(std::size_t i);

  sentinel_options options_;
  std::vector<std::unique_ptr<redis_server>> data_;
  temp_dir dir_;  // the sentinels': before their processes, which die first
  std::vector<std::uint16_t> sentinel_ports_;
  std::vector<server_process> sentinels_;
};

// The set this process's tests share, started on first use (from the test's main thread).
sentinel_set& shared_sentinel_set();

}  // namespace relock::test
