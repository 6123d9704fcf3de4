// SPDX-License-Identifier: Apache-2.0
// Values as the CLI's JSON output writes them (status --json, top --json).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace relock_cli {

// null where there is no value, never a made-up 0 or "".
template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// An empty text is no text (a pid or host name nobody reported).
inline nlohmann::json or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

}  // namespace relock_cli
