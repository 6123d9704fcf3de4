// SPDX-License-Identifier: Apache-2.0
// What the TLS tests ask of a client: a file path as a URL option's value, and how a client's
// construction was refused.
#pragma once

#include <string>
#include <system_error>
#include <utility>

#include <relock/client.hpp>
#include <relock/errors.hpp>

namespace relock::test {

// `path` as the value of ?tls_ca= and friends: its slashes percent-encoded.
inline std::string url_path(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

// The refusal a client construction ends with, or {} when it connects.
inline std::pair<std::error_code, std::string> refusal(const relock::config& c) {
  try {
    relock::client client(c);
    return {};
  } catch (const relock::error& e) {
    return {e.code(), e.what()};
  }
}

}  // namespace relock::test
