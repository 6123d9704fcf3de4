// SPDX-License-Identifier: Apache-2.0
#include "support/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>

namespace relock::test {

temp_dir::temp_dir(std::string_view prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = (base && *base) ? base : "/tmp";
  pattern += "/";
  pattern += prefix;
  pattern += "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  path_ = pattern;
}

temp_dir::~temp_dir() { remove(); }

temp_dir::temp_dir(temp_dir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

temp_dir& temp_dir::operator=(temp_dir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void temp_dir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

}  // namespace relock::test
