// SPDX-License-Identifier: Apache-2.0
#include "layout/client_name.hpp"

#include <unistd.h>

#include <array>

namespace relock::layout {
namespace {

std::string host_name() {
  std::array<char, 256> buffer{};
  if (::gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown";
  std::string host(buffer.data());
  // CLIENT SETNAME takes no spaces; a host name has none, but a container's may be odd.
  for (char& c : host) {
    if (c <= ' ' || c > '~') c = '_';
  }
  return host.empty() ? "unknown" : host;
}

void replace_all(std::string& s, std::string_view what, std::string_view with) {
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size())) {
    s.replace(at, what.size(), with);
  }
}

}  // namespace

std::string client_name(std::string_view pattern, std::string_view id) {
  std::string name(pattern.empty() ? default_client_name : pattern);
  replace_all(name, "{id}", id);
  if (name.find("{host}") != std::string::npos) replace_all(name, "{host}", host_name());
  replace_all(name, "{pid}", std::to_string(::getpid()));
  return name;
}

std::optional<std::string> client_name_problem(std::string_view pattern) {
  for (char c : pattern) {
    // Redis refuses a name with a space or a newline; other control bytes would garble
    // CLIENT LIST's one line per client.
    if (c <= ' ' || c == 0x7f) {
      return "client_name must have no spaces, newlines or control characters";
    }
  }
  return std::nullopt;
}

}  // namespace relock::layout
