// SPDX-License-Identifier: Apache-2.0
#include "support/log_file.hpp"

#include <fstream>
#include <sstream>
#include <system_error>

namespace relock::test {

std::string read_from(const std::filesystem::path& file, std::uintmax_t offset) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const std::filesystem::path& file, std::size_t lines) {
  // Test servers log little, but a runaway one must not make a failure message huge.
  constexpr std::uintmax_t window = 64 * 1024;
  std::error_code ec;
  auto size = std::filesystem::file_size(file, ec);
  if (ec) return {};
  std::string text = read_from(file, size > window ? size - window : 0);
  // A trailing newline ends the last line; it does not start an empty one.
  std::size_t scan = (!text.empty() && text.back() == '\n') ? text.size() - 1 : text.size();
  std::size_t start = text.size();
  for (std::size_t found = 0; found < lines; ++found) {
    auto nl = scan == 0 ? std::string::npos : text.rfind('\n', scan - 1);
    if (nl == std::string::npos) {
      start = 0;
      break;
    }
    start = nl + 1;
    scan = nl;
  }
  return text.substr(start);
}

}  // namespace relock::test
