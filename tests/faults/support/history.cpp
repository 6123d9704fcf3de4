// SPDX-License-Identifier: Apache-2.0
#include "support/history.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <system_error>

namespace relock::test {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string json_quote(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      // Bytes, not text: every byte outside printable ASCII as \u00XX, so any name survives.
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

event::event(std::string_view op, std::string_view phase) {
  str("op", op);
  str("ph", phase);
}

void event::key(std::string_view k) {
  fields_ += ',';
  fields_ += json_quote(k);
  fields_ += ':';
}

event& event::str(std::string_view k, std::string_view value) {
  key(k);
  fields_ += json_quote(value);
  return *this;
}

event& event::integer(std::string_view k, std::int64_t value) {
  key(k);
  fields_ += std::to_string(value);
  return *this;
}

event& event::optional_integer(std::string_view k, std::optional<std::int64_t> value) {
  key(k);
  fields_ += value ? std::to_string(*value) : "null";
  return *this;
}

event& event::boolean(std::string_view k, bool value) {
  key(k);
  fields_ += value ? "true" : "false";
  return *this;
}

history::history(const std::string& path, std::string process) : process_(std::move(process)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
}

history::~history() {
  if (fd_ >= 0) ::close(fd_);
}

void history::append(int thread, const event& e, std::string_view raw_fields) {
  std::string line = "{\"t\":" + std::to_string(monotonic_ns()) + ",\"p\":" + json_quote(process_) +
                     ",\"th\":" + std::to_string(thread) + e.fields() + std::string(raw_fields) +
                     "}\n";
  // One write per line: O_APPEND makes each write land whole at the end of the file.
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // a full disk ends the history; the checker sees a short run
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace relock::test
