// SPDX-License-Identifier: Apache-2.0
// How the tests of a ctest run find the shared cluster and talk to the keeper that owns it
// (tests/cluster_keeper): a state file the keeper writes, and one-line requests over a Unix
// socket in the abstract namespace (no path length limit, nothing left on disk).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cluster_nodes.hpp"

namespace relock::test {

struct cluster_state {
  pid_t keeper_pid = -1;
  // The keeper's start time (/proc/PID/stat), telling it from a process that reused its PID.
  unsigned long long keeper_start_time = 0;
  // The keeper's socket name in the abstract namespace (without the leading NUL).
  std::string control{};
  std::filesystem::path dir{};  // cluster_nodes::dir(), holding every node's dir
  cluster_options options{};
  std::vector<cluster_node> nodes{};
};

// Replaces `file` atomically (write, then rename), so a reader never sees half a state.
void write_cluster_state(const std::filesystem::path& file, const cluster_state& state);
// Throws std::runtime_error when the file is missing or malformed.
cluster_state read_cluster_state(const std::filesystem::path& file);

// The process's start time in clock ticks since boot, or 0 when there is no such process.
unsigned long long process_start_time(pid_t pid);
// True while `pid` runs; a zombie (dead, not yet reaped by its parent) counts as gone.
bool process_alive(pid_t pid);

// The state's keeper still runs: its PID is alive and was started when the state says.
bool keeper_running(const cluster_state& state);

// Sends `request` ("restart 30001") to the keeper listening on `control` and returns what
// follows "ok" in its reply. Throws std::runtime_error when the keeper cannot be reached, does
// not answer within `timeout`, or answers with an error (its text is kept).
std::string keeper_request(const std::string& control, const std::string& request,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace relock::test
