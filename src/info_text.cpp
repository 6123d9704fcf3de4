// SPDX-License-Identifier: Apache-2.0
#include "info_text.hpp"

#include <algorithm>

namespace relock::detail {

std::string_view info_field(std::string_view info, std::string_view name) {
  for (std::size_t at = 0; at < info.size();) {
    const auto end = std::min(info.find('\n', at), info.size());
    auto line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ':') {
      return line.substr(name.size() + 1);
    }
    at = end + 1;
  }
  return {};
}

}  // namespace relock::detail
