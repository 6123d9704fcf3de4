// SPDX-License-Identifier: Apache-2.0
// A private dir for the demo under the system's temp dir (relock-demo-XXXXXX): the run's files,
// or a private Redis's. Removed with everything in it when this goes, however the demo ends,
// unless keep() asked for it to stay (a log that says why something failed).
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli.hpp"

namespace relock_cli {

class demo_dir {
 public:
  demo_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "relock-demo-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw failure(exit_usage, "demo: cannot make a temp dir: " + std::string(strerror(errno)));
    }
    path_ = pattern;
  }
  ~demo_dir() {
    if (keep_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  demo_dir(const demo_dir&) = delete;
  demo_dir& operator=(const demo_dir&) = delete;

  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace relock_cli
