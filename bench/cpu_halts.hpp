// SPDX-License-Identifier: Apache-2.0
// How often each CPU went idle deeper than polling, as the kernel counts it (cpuidle): on a VM
// whose idle vCPUs halt, every such entry is a halt, and the wake-up that ends it is what
// config::busy_poll saves (bench/RESULTS.md, session 27). The window figures split the entries
// between the CPUs the driver may run on and the others (with bench/run's pinning: the server's).
#pragma once

#include <cstdint>
#include <vector>

namespace relock_bench {

// Entries into the idle states that are not "POLL", per CPU, since boot; empty when the kernel
// exposes no cpuidle (/sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,usage}).
std::vector<std::int64_t> cpu_idle_entries();

struct halts {
  std::int64_t mine = -1;    // on the CPUs of this process's affinity mask; -1: not counted
  std::int64_t others = -1;  // on every other CPU
};

// What happened between two readings of cpu_idle_entries().
halts halts_between(const std::vector<std::int64_t>& before,
                    const std::vector<std::int64_t>& after);

}  // namespace relock_bench
