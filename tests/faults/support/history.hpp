// SPDX-License-Identifier: Apache-2.0
// A process's history file (HISTORY.md): JSON Lines, one event per line, each written with one
// write(2) on an O_APPEND descriptor, so a process killed mid-run leaves whole lines behind
// (at most its last one torn) and threads never interleave inside a line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relock::test {

// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the host (steady_clock is
// CLOCK_MONOTONIC on Linux, but the checker needs the raw number across processes).
std::int64_t monotonic_ns();

// One event under construction: add fields, then history::append it.
//   history.append(event("acquire", "ok").str("name", n).integer("token", 7));
class event {
 public:
  event(std::string_view op, std::string_view phase);
  event& str(std::string_view key, std::string_view value);
  event& integer(std::string_view key, std::int64_t value);
  event& optional_integer(std::string_view key, std::optional<std::int64_t> value);  // null
  event& boolean(std::string_view key, bool value);
  // The line without its time, process and thread (history::append adds them).
  const std::string& fields() const { return fields_; }

 private:
  void key(std::string_view k);
  std::string fields_;
};

// Thread-safety: append may be called from any thread.
class history {
 public:
  // Opens (creates) `path` for appending; throws std::system_error on failure.
  history(const std::string& path, std::string process);
  ~history();
  history(const history&) = delete;
  history& operator=(const history&) = delete;

  // Stamps `e` with the time now, the process and `thread`, and writes it as one line;
  // `raw_fields` (",\"key\":[...]", already JSON) goes at its end.
  void append(int thread, const event& e, std::string_view raw_fields = {});

 private:
  int fd_ = -1;
  std::string process_;
};

// `s` as a JSON string, quotes included (names may hold any byte).
std::string json_quote(std::string_view s);

}  // namespace relock::test
