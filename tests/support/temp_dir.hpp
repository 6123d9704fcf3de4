// SPDX-License-Identifier: Apache-2.0
// A fresh directory for one server's config, log and data, removed with everything in it.
#pragma once

#include <filesystem>
#include <string_view>

namespace relock::test {

// Created with mkdtemp under $TMPDIR (or /tmp when unset), so parallel tests never share one.
// Move-only; the destructor removes the tree and ignores errors (a leftover temp dir must not
// fail a test that otherwise passed).
class temp_dir {
 public:
  explicit temp_dir(std::string_view prefix = "relock");
  ~temp_dir();
  temp_dir(temp_dir&& other) noexcept;
  temp_dir& operator=(temp_dir&& other) noexcept;
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  void remove() noexcept;

  std::filesystem::path path_;
};

}  // namespace relock::test
