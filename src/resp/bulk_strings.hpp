// SPDX-License-Identifier: Apache-2.0
// A list of strings kept the way RESP sends them, `$<len>\r\n<bytes>\r\n` each, back to back in
// one string: a script call's keys, or its arguments, cost one allocation however many there
// are (none while they fit the string's own buffer), and a request copies them whole instead of
// encoding each again. A vector of strings cost one allocation for the vector and one for every
// string longer than the small-string buffer (an owner id, a channel, a latch).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace relock::resp {

// RESP's header of a type and a count (`*3\r\n`, `$12\r\n`): appended to `out`, and its size.
void append_header(std::string& out, char type, std::size_t n);
std::size_t header_size(std::size_t n);
// One string as a bulk string, `$<len>\r\n<bytes>\r\n`, appended to `out`.
void append_bulk(std::string& out, std::string_view part);

class bulk_strings {
 public:
  bulk_strings() = default;
  bulk_strings(std::initializer_list<std::string_view> parts);
  // The vectors of the callers off the lock's path (renewals, queues, inspect); implicit, so
  // they pass them as they are.
  bulk_strings(const std::vector<std::string>& parts);  // NOLINT(google-explicit-constructor)

  // What one string takes, encoded: for reserving a whole list at once.
  static std::size_t encoded_size(std::string_view part);
  void reserve(std::size_t bytes) { encoded_.reserve(bytes); }
  void push_back(std::string_view part);

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Reading walks the list from its start: for the route (the first key) and for tests.
  std::string_view front() const { return (*this)[0]; }
  std::string_view back() const { return (*this)[count_ - 1]; }
  std::string_view operator[](std::size_t i) const;
  std::vector<std::string> decoded() const;

  const std::string& encoded() const { return encoded_; }

  friend bool operator==(const bulk_strings&, const bulk_strings&) = default;

 private:
  template <class Range>
  void assign_sized(const Range& parts);

  std::string encoded_;
  std::size_t count_ = 0;
};

}  // namespace relock::resp
