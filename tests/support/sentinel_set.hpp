// SPDX-License-Identifier: Apache-2.0
// A Sentinel deployment for tests: one master and one replica (real redis-server processes)
// watched by 3 redis-sentinel processes, on free loopback ports, each in a temp dir of its own.
// Everything is 127.0.0.1, so what the sentinels announce is what a client can reach.
//
// The tests of one process share one set (shared_sentinel_set): started once, stopped at exit.
// Shared means one test's failover is the next test's starting point, so a test calls restore()
// first: it resumes what was paused, restarts what was killed (as a replica of whoever is master
// now) and waits until the set is healthy again. Ask master_port() instead of assuming which
// data node is the master: every failover swaps them.
//
// Sentinel 7.0 timings these tests live with (measured on a 2-core machine with the default
// options; tests/sentinel/sentinel_fixture_test.cpp prints them):
// - SENTINEL FAILOVER: every sentinel names the new master ~1.1-1.2 s later (the leader waits
//   for the replica's INFO, polled once a second, to confirm its promotion).
// - The demoted master window: after the switch the old master keeps answering ROLE master, with
//   no replica, for ~10.0-10.1 s (11.2-11.3 s after SENTINEL FAILOVER). A sentinel converts a
//   node it lists as a replica only once it has reported "master" for over 8 s (4 hello
//   periods), on an INFO reply, and it asks replicas for INFO every 10 s. So wait_healthy() after
//   failover() takes ~10 s; restore() demotes such a node itself, as the sentinels are about to.
// - A killed master: the sentinels name the replica ~3.2-3.3 s later (down_after, agreeing on it,
//   an election, the promotion).
// - A killed node restarted as a replica of the current master is healthy again within ~1 s; no
//   SENTINEL RESET is needed (the sentinels keep it listed, flagged down, and reconnect). Had it
//   come back as an (empty) master, the sentinels would convert it only after ~10 s.
// - A sentinel paused for over 2 s enters TILT mode once resumed and acts on nothing for 30 s
//   (see restore()).
//
// Thread-safety: none; drive it from the test's main thread. The servers die with the thread
// that started them (PR_SET_PDEATHSIG, see server_process), so start and restart() them there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace relock::test {

struct sentinel_options {
  std::string master_name = "relock-master";
  // A master silent this long is subjectively down. Low so failover tests are quick, yet above
  // the pauses of a loaded CI machine, which must not fail a master over; and well above
  // Sentinel's 1 s ping and reconnect period. At 1 s, right after a crash failover, a sentinel
  // whose link to the dead master was retrying once a second may reach the new master only
  // ~1 s after the switch: it then flags the new master down before it could answer, the
  // other sentinels' "down" replies about the old master still count towards the quorum, and
  // a second failover starts (or aborts for want of a replica, which blocks the sentinels for
  // 2 * failover_timeout). Measured: 2 of 6 crash failovers at 1 s, 0 of 8 at 2 s.
  std::chrono::milliseconds down_after{2'000};
  // Bounds a failover's steps: the election (min(this, 10 s)) and the wait for the promoted
  // replica to report itself master (~1 s: the leader polls its INFO once a second). A sentinel
  // whose attempt failed (a split vote, a replica that never got promoted), or that voted for
  // another, starts no failover of that master for twice this; a completed failover resets that
  // (+switch-master), so a SENTINEL FAILOVER in one test never holds up the failover after a
  // master SIGKILL in the next. 3 s: three times the promotion, and a failed attempt is retried
  // after ~6-7 s instead of Sentinel's default 6 minutes.
  std::chrono::milliseconds failover_timeout{3'000};
  int sentinels = 3;
  int quorum = 2;
  // requirepass and masterauth on both data nodes; the sentinels' auth-pass.
  std::string data_password{};
  // requirepass on the sentinels, and their sentinel-pass, to talk to each other.
  std::string sentinel_password{};
};

class sentinel_set {
 public:
  // Starts the data nodes, waits for the replica to sync, starts the sentinels; returns once
  // wait_healthy() passes. Throws std::runtime_error with the tails of the logs otherwise.
  explicit sentinel_set(sentinel_options options = {});
  // SIGKILLs and reaps every process (paused or not), then removes the dirs.
  ~sentinel_set();
  sentinel_set(const sentinel_set&) = delete;
  sentinel_set& operator=(const sentinel_set&) = delete;

  const sentinel_options& options() const { return options_; }
  // "redis-sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/NAME", without credentials.
  std::string url() const;
  std::vector<std::uint16_t> sentinel_ports() const;
  // The two redis-servers, in a fixed order (the first was the master at start).
  std::vector<std::uint16_t> data_ports() const;
  // The master as the sentinels name it now (the first sentinel that answers and is not
  // paused). Throws std::runtime_error when none answers.
  std::uint16_t master_port() const;
  // The data node that is not master_port().
  std::uint16_t replica_port() const;

  // A new connection to a data node, authenticated with data_password when set.
  raw_client client(std::uint16_t data_port) const;
  // A new connection to sentinel `i`, authenticated with sentinel_password when set.
  raw_client sentinel(std::size_t i) const;

  // SENTINEL FAILOVER (asked of the first sentinel neither paused nor in TILT mode); returns the
  // new master's port once every running sentinel that is not paused names it and it says ROLE
  // master. The set is not healthy yet: the old master still says ROLE master for ~10 s (see
  // above). Throws std::runtime_error when a sentinel refuses or after `timeout`.
  std::uint16_t failover(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits until every running sentinel that is not paused names a master other than
  // `old_master`, and that node says ROLE master; returns its port. Throws std::runtime_error
  // naming the set's problem after `timeout`.
  std::uint16_t wait_for_new_master(std::uint16_t old_master, std::chrono::milliseconds timeout);

  // SIGKILL, as a crash would; idempotent.
  void kill(std::uint16_t data_port);
  // Runs a killed data node again on its port and dir, empty, as a replica of the master the
  // sentinels name (as the master itself if they still name this node); returns once it
  // answers. Throws std::logic_error if it still runs, std::runtime_error when no sentinel
  // answers or the node does not come up.
  void restart(std::uint16_t data_port);
  // SIGSTOP / SIGCONT: the process keeps its sockets, the kernel accepts connections, nothing
  // answers until resumed.
  void pause(std::uint16_t data_port);
  void resume(std::uint16_t data_port);
  void pause_sentinel(std::size_t i);
  void resume_sentinel(std::size_t i);
  // The data node's process runs (a paused one too).
  bool running(std::uint16_t data_port);

  // Empty when healthy, else the first problem found: every process runs and is not paused;
  // every sentinel names the same master; that master says ROLE master with the other data node
  // online and its acknowledged offset close; the replica's link to that master is up; every
  // sentinel is out of TILT mode, flags the master "master" only (no failover in progress),
  // knows the other sentinels, and counts exactly that replica (SENTINEL REPLICAS entries
  // without s_down/o_down/disconnected, as a client sizing WAIT counts them), which it has
  // heard report the replica role.
  std::string health_problem() const;
  // Waits until health_problem() is empty, hastening a sentinel's INFO of a replica whose role
  // it has not heard yet (refresh_role); throws std::runtime_error naming the problem, with
  // the logs' tails, after `timeout`.
  void wait_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(40)) const;
  // Repairs what a test left: resumes paused processes (and lets a sentinel out of the TILT
  // mode a long pause puts it in), waits for the sentinels to replace a killed master, restarts
  // dead data nodes as replicas, demotes a node still acting as master after a switchover, and
  // waits until healthy.
  void restore(std::chrono::milliseconds timeout = std::chrono::seconds(40));

 private:
  // One redis-sentinel, in its own dir: it rewrites its sentinel.conf as it learns the set.
  struct sentinel_node {
    std::filesystem::path dir;
    std::uint16_t port = 0;
    server_process process;
  };

  void start_data_nodes();
  void wait_replica_synced();
  void start_sentinel(sentinel_node& node);
  std::string sentinel_config(const sentinel_node& node) const;
  // Which master data node `i` replicates at its next start (0: none, it starts as a master).
  void set_replica_of(std::size_t i, std::uint16_t master);
  std::filesystem::path replica_of_file(std::size_t i) const;
  std::size_t index_of(std::uint16_t data_port) const;
  redis_server& data(std::uint16_t data_port) const { return *data_.at(index_of(data_port)); }
  std::uint16_t other_than(std::uint16_t data_port) const;
  bool answers(const sentinel_node& node) const;

  // Short-timeout connections for the fixture's own checks: a node that does not answer within
  // a second is a problem to report, not a reason to hang.
  raw_client probe(std::uint16_t data_port) const;
  raw_client probe_sentinel(std::size_t i) const;
  // What the node says it is (ROLE): "master", "slave", or empty when it does not answer.
  std::string role_of(std::uint16_t data_port) const;
  // The master sentinel `i` names (SENTINEL GET-MASTER-ADDR-BY-NAME). Throws
  // std::runtime_error when it does not answer or names none.
  std::uint16_t named_by(std::size_t i) const;
  // The master every running sentinel that is not paused names, if they agree.
  std::optional<std::uint16_t> agreed_master() const;
  bool listening(std::size_t i) const;  // running and not paused
  // Sentinel `i` is in TILT mode (INFO sentinel), in which it acts on nothing (see restore()).
  bool in_tilt(std::size_t i) const;

  // A node that still says ROLE master after the sentinels switched to the other one is told to
  // replicate it, as a sentinel would do some 10 s later. Returns whether it did.
  bool demote_stale_master();
  // The replica a sentinel still hears report "master" (a node demote_stale_master() or a
  // restart just turned into a replica) is asked its INFO soon: the sentinel's INFO period is
  // shortened for a moment, then set back. Returns whether it did. See health_problem().
  bool refresh_role(std::size_t i) const;
  // A sentinel resumed after a pause of over 2 s enters TILT mode: for 30 s it acts on nothing
  // (a SENTINEL FAILOVER asked of it waits until then). Its TILT period is shortened for a
  // moment, which lets it out at its next timer tick, then set back. Returns whether it did.
  bool end_tilt(std::size_t i);
  // The dead data nodes back, the master first.
  void restart_dead_nodes(std::chrono::milliseconds timeout);
  [[noreturn]] void throw_unhealthy(const std::string& what, std::chrono::milliseconds timeout,
                                    const std::string& problem) const;
  std::string log_tails(std::size_t lines) const;

  sentinel_options options_;
  std::filesystem::path sentinel_program_;
  temp_dir dir_;  // the sentinels' dirs and the replica-of files; outlives every process
  std::vector<std::unique_ptr<redis_server>> data_;
  std::set<std::uint16_t> paused_data_;  // redis_server does not say whether it is paused
  std::vector<std::unique_ptr<sentinel_node>> sentinels_;
};

// The set the tests of this process share, started on first use and stopped at exit. Call it
// from the test's main thread (see above). Throws std::runtime_error (failing the calling test)
// when the set does not come up; the next call tries again.
sentinel_set& shared_sentinel_set();

}  // namespace relock::test
