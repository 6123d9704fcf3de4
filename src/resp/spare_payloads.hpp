// SPDX-License-Identifier: Apache-2.0
// The strings of written requests, kept per thread for the next requests to encode into: a
// script call's request is encoded on the I/O thread and copied into its connection's write
// buffer there, so once warm a steady flow of them allocates nothing for their bytes (issue #36;
// tests/allocations counts it). A request made on another thread takes from that thread's
// spares, which are only ever empty: it allocates, as it always did.
#pragma once

#include <cstddef>
#include <string>

namespace relock::resp {

class spare_payloads {
 public:
  static constexpr std::size_t kept = 16;           // per thread
  static constexpr std::size_t largest = 4 * 1024;  // a larger buffer is freed, not kept

  // An empty string: one kept earlier on this thread (its buffer reused) when there is one.
  static std::string take();
  // `payload`'s buffer, kept for a later take() on this thread (or freed when enough are kept).
  static void give(std::string&& payload);
};

}  // namespace relock::resp
