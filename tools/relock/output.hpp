// SPDX-License-Identifier: Apache-2.0
// What the subcommands report, as plain structs, and the one place that renders them: a human
// table on stdout, or one JSON object per line with --json. Diagnostics go to stderr elsewhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client_directory.hpp"

namespace relock_cli {

struct holder {
  std::string owner;  // "<client-id>:<thread-id>", as in the lock's hash (":write" taken off)
  std::int64_t holds = 0;
  std::string side;  // "exclusive", or "read" / "write" for a read-write lock
  // A read side: the time left on each read hold, by hold number (none: expired).
  std::vector<std::optional<std::int64_t>> read_leases_ms{};
  // Where it runs, from CLIENT LIST (client_directory.hpp); none: not a relock client we found.
  std::optional<holder_process> process{};
};

// A fair lock's queued waiter. Its deadline is when it is presumed gone if it has not asked
// again by then (a waiting relock or Redisson moves it on each time it asks).
struct waiter {
  std::string owner;
  std::optional<std::int64_t> gives_up_at_ms;  // the deadline: Unix epoch ms, by the waiter's clock
  std::optional<std::int64_t> gives_up_in_ms;  // the same less this host's now; < 0: passed
};

struct lock_status {
  std::string name;
  std::string node;    // host:port of the server that serves it (in a cluster, its slot's master)
  std::string server;  // what runs there, "redis 7.0.15" or "valkey 9.1.2" (lock_info::server)
  int synced_replicas = 0;             // replica sync: each lock write waits for so many (0: off)
  std::optional<int> online_replicas;  // as the master says
  std::optional<int> replicas_acknowledging;  // of them, those that have its latest write
  std::string kind;  // lock, fair, fenced, read-write: what the data in Redis shows
  bool locked = false;
  std::optional<std::int64_t> remaining_lease_ms;  // none: free, or held without expiry
  std::optional<std::string> mode;                 // read-write: "read" or "write"
  std::optional<std::int64_t> fencing_token;       // fenced: the last token handed out
  std::vector<holder> holders;
  std::vector<waiter> queue;          // fair: head first
  std::string process_lookup_failed;  // why no holder's process could be looked up, if so
};

// A permit taken from a permit-expirable semaphore.
struct permit {
  std::string id;                             // 32 hex chars
  std::optional<std::int64_t> expires_at_ms;  // Unix epoch ms, by its acquirer's clock; none: never
  std::optional<std::int64_t> expires_in_ms;  // the same less this host's now; < 0: passed
};

// A string holding an integer: a semaphore's available permits or a count-down latch's count
// (kind "counter": the data cannot tell which), or a permit-expirable semaphore (kind
// "permit-semaphore": its permits taken show it).
struct counter_status {
  std::string name;
  std::string node;
  std::string server;  // as lock_status's
  std::string kind;
  std::optional<std::int64_t> value;  // none: a permit semaphore whose count is not stored
  std::int64_t permits_taken = 0;
  std::vector<permit> permits;  // the first 1000 to expire, soonest first
};

// A queue: the destination list, and the delayed queue feeding it.
struct queue_status {
  std::string name;
  std::int64_t length = 0;                     // ready to take
  std::int64_t delayed = 0;                    // not yet due
  std::optional<std::int64_t> next_due_ms;     // Unix epoch ms, by the offering client's clock
  std::optional<std::int64_t> next_due_in_ms;  // the same less this host's now
};

struct unlock_result {
  std::string name;
  bool released = false;  // false: it was not locked
};

// How a `relock run` went: --report FILE, or --json (on stderr, the command owning stdout).
struct run_report {
  std::string name;
  std::string outcome;                 // ran, busy, lost, interrupted, error
  int exit_status = 0;                 // what relock exits with
  std::optional<int> command_status;   // the command's own, when it ran to its end
  double waited_seconds = 0;           // from the start to the acquire's end, connecting included
  std::optional<double> held_seconds;  // from acquired to released
  std::int64_t renewals = 0;           // watchdog renewals of the hold that reached Redis
  std::string detail;                  // lost, error: why, as the message on stderr says
};

// Writes `r` as one JSON object on one line to `path` ("-": stderr). False, with the reason in
// `why`, when the file cannot be written.
bool write_report(const run_report& r, const std::string& path, std::string& why);

struct demo_result {
  std::string url;
  bool private_server = false;
  std::string node;  // host:port of the server that serves the demo's lock
  int workers = 0;
  int iterations = 0;
  std::int64_t count = 0;
  std::int64_t expected = 0;
  double seconds = 0;
  std::size_t acquisitions = 0;
  std::size_t handoffs = 0;  // consecutive holds by different processes
  double handoff_p50_us = 0;
  double handoff_p99_us = 0;
};

void print(const lock_status& s, bool json);
void print(const counter_status& s, bool json);
void print(const queue_status& s, bool json);
void print(const unlock_result& r, bool json);
void print(const demo_result& r, bool json);

}  // namespace relock_cli
