// SPDX-License-Identifier: Apache-2.0
// The demo's files: see demo.hpp.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli.hpp"
#include "demo.hpp"

namespace relock_cli::demo {
namespace {

namespace fs = std::filesystem;

fs::path counter_path(const std::string& dir) { return fs::path(dir) / "counter"; }
fs::path holds_path(const std::string& dir, int worker) {
  return fs::path(dir) / ("holds-" + std::to_string(worker));
}

[[noreturn]] void io_failed(const std::string& what, const fs::path& path) {
  throw failure(exit_usage,
                "demo: cannot " + what + " " + path.string() + ": " + std::strerror(errno));
}

// Writes `text` to a fresh file beside `path`, then renames it over `path`: readers see the
// old file or the new one, never a part.
void replace_file(const fs::path& path, const std::string& tag, const std::string& text) {
  const fs::path temp = path.string() + ".new-" + tag;
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!(out << text) || !out.flush()) io_failed("write", temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) io_failed("replace", path);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

}  // namespace

std::int64_t read_counter(const std::string& dir) {
  const auto path = counter_path(dir);
  if (!fs::exists(path)) return 0;
  const std::string text = slurp(path);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw failure(exit_usage, "demo: " + path.string() + " holds '" + text + "', not a count");
  }
  return n;
}

void write_counter(const std::string& dir, int worker, std::int64_t value) {
  replace_file(counter_path(dir), std::to_string(worker), std::to_string(value));
}

void write_holds(const std::string& dir, int worker, const std::string& lines) {
  replace_file(holds_path(dir, worker), "0", lines);
}

std::string read_holds(const std::string& dir, int worker) {
  return slurp(holds_path(dir, worker));
}

}  // namespace relock_cli::demo
