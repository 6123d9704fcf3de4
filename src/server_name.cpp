// SPDX-License-Identifier: Apache-2.0
#include "server_name.hpp"

#include <algorithm>

namespace relock::detail {
namespace {

// The value of `field:` on a line of INFO's text; empty when absent.
std::string_view info_field(std::string_view info, std::string_view field) {
  for (std::size_t at = 0; at < info.size();) {
    const auto end = std::min(info.find('\n', at), info.size());
    auto line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > field.size() && line.substr(0, field.size()) == field &&
        line[field.size()] == ':') {
      return line.substr(field.size() + 1);
    }
    at = end + 1;
  }
  return {};
}

}  // namespace

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
