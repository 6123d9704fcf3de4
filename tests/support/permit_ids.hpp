// SPDX-License-Identifier: Apache-2.0
// A permit-expirable semaphore's data as tests read it (data-layout §7), written here, not taken
// from the library, so a test checks the library against an independent reading.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace relock::test {

// Unix ms on this machine's clock: the one relock and Redisson score permits with.
inline std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 32 lowercase hex digits, as both sides show a permit id.
inline bool is_permit_id(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The 16 bytes a permit id stands for in Redis.
inline std::string raw_bytes(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace relock::test
