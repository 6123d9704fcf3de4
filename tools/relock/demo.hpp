// What `relock demo` and its worker processes share: their keys in Redis, under one prefix per
// demo run so two demos on one server never mix their counters.
#pragma once

#include <string>

namespace relock_cli::demo {

inline std::string lock_name(const std::string& prefix) { return prefix + ":lock"; }
// The shared counter: read, pause, write; exact only because of the lock.
inline std::string counter_key(const std::string& prefix) { return prefix + ":counter"; }
// One entry per worker: "worker acquired_ns released_ns" lines, steady_clock (CLOCK_MONOTONIC,
// the same clock in every process on the host), for the handoff latencies.
inline std::string holds_key(const std::string& prefix) { return prefix + ":holds"; }

}  // namespace relock_cli::demo
