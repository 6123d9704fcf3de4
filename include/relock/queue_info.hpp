// SPDX-License-Identifier: Apache-2.0
/// \file
/// What client::inspect_queue reads of a queue name, read-only, in one consistent snapshot: the
/// destination list and the delayed queue feeding it (docs/data-layout.md §9), whoever wrote
/// them (relock or Redisson).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace relock {

/// \copydoc queue_info.hpp
struct queue_info {
  /// As given to inspect_queue.
  std::string name;
  std::string redis_type;    ///< of the name itself: "list", "none", or another type
  std::int64_t length = 0;   ///< elements ready to take
  std::int64_t delayed = 0;  ///< elements not yet due
  std::optional<std::int64_t> next_due_ms{};  ///< the earliest of them, Unix ms
};

}  // namespace relock
