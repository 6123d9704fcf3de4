// SPDX-License-Identifier: Apache-2.0
// What `relock demo` and its worker processes share: one lock, named under a prefix per demo
// run so two demos on one server never meet, and a private temp dir holding what the lock
// protects. The counter is a file, not a Redis key, on purpose: a lock guards something Redis
// knows nothing about (a file, a deploy, a report), and the public API is all the CLI uses.
#pragma once

#include <cstdint>
#include <string>

namespace relock_cli::demo {

inline std::string lock_name(const std::string& prefix) { return prefix + ":lock"; }

// The shared counter in `dir`: read, pause, write; exact only because of the lock. 0 before the
// first write. Each write replaces the file whole (rename), so the demo's progress line, which
// reads without the lock, never sees half a number. Throw failure when the file system fails.
std::int64_t read_counter(const std::string& dir);
void write_counter(const std::string& dir, int worker, std::int64_t value);

// Each worker's holds, "worker acquired_ns released_ns" lines, by steady_clock
// (CLOCK_MONOTONIC, the same clock in every process on the host): for the handoff latencies.
void write_holds(const std::string& dir, int worker, const std::string& lines);
std::string read_holds(const std::string& dir, int worker);

}  // namespace relock_cli::demo
