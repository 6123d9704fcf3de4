// Key and channel names of the Redisson contract (redisson-compat.md §1-§7). Every derived
// name keeps the main key's hash tag, so a script touching several of them stays in one slot.
#pragma once

#include <string>
#include <string_view>

namespace relock::objects {

// prefix + ":" + name when name contains '{', else prefix + ":{" + name + "}".
std::string prefixed(std::string_view prefix, std::string_view name);
// name + ":" + suffix when name contains '{', else "{" + name + "}:" + suffix.
std::string suffixed(std::string_view name, std::string_view suffix);

inline std::string lock_channel(std::string_view name) {
  return prefixed("redisson_lock__channel", name);
}
inline std::string unlock_latch_key(std::string_view name, std::string_view request_id) {
  return prefixed("redisson_unlock_latch", name) + ":" + std::string(request_id);
}

}  // namespace relock::objects
