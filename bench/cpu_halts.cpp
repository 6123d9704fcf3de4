// SPDX-License-Identifier: Apache-2.0
#include "cpu_halts.hpp"

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace relock_bench {

std::vector<std::int64_t> cpu_idle_entries() {
  namespace fs = std::filesystem;
  std::vector<std::int64_t> out;
  for (int cpu = 0;; ++cpu) {
    const fs::path idle = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle";
    std::error_code ec;
    if (!fs::is_directory(idle, ec)) break;
    std::int64_t entries = 0;
    for (int state = 0;; ++state) {
      const fs::path dir = idle / ("state" + std::to_string(state));
      std::ifstream name(dir / "name"), usage(dir / "usage");
      if (!name || !usage) break;
      std::string n;
      std::int64_t u = 0;
      std::getline(name, n);
      usage >> u;
      if (n != "POLL") entries += u;
    }
    out.push_back(entries);
  }
  return out;
}

halts halts_between(const std::vector<std::int64_t>& before,
                    const std::vector<std::int64_t>& after) {
  halts h;
  if (before.empty() || before.size() != after.size()) return h;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return h;
  h.mine = 0;
  h.others = 0;
  for (std::size_t cpu = 0; cpu < before.size(); ++cpu) {
    const auto d = after[cpu] - before[cpu];
    (CPU_ISSET(static_cast<int>(cpu), &mask) ? h.mine : h.others) += d;
  }
  return h;
}

}  // namespace relock_bench
