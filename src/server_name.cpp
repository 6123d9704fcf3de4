// SPDX-License-Identifier: Apache-2.0
#include "server_name.hpp"

#include "info_text.hpp"

namespace relock::detail {

std::string server_name_of(std::string_view info) {
  const auto name = info_field(info, "server_name");  // Valkey 8+; Redis has none
  if (!name.empty()) {
    const auto version = info_field(info, std::string(name) + "_version");
    if (!version.empty()) return std::string(name) + " " + std::string(version);
  }
  const auto redis = info_field(info, "redis_version");
  return redis.empty() ? std::string() : "redis " + std::string(redis);
}

}  // namespace relock::detail
