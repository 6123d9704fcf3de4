// SPDX-License-Identifier: Apache-2.0
#include "resp/bulk_strings.hpp"

#include <charconv>
#include <stdexcept>

namespace relock::resp {

void append_header(std::string& out, char type, std::size_t n) {
  char number[24];
  out += type;
  out.append(number, std::to_chars(number, number + sizeof number, n).ptr);
  out += "\r\n";
}

std::size_t header_size(std::size_t n) {
  std::size_t digits = 1;
  while (n >= 10) n /= 10, ++digits;
  return 1 + digits + 2;
}

void append_bulk(std::string& out, std::string_view part) {
  append_header(out, '$', part.size());
  out.append(part);
  out += "\r\n";
}

// Sized once, then written: one allocation for the whole list.
template <class Range>
void bulk_strings::assign_sized(const Range& parts) {
  std::size_t bytes = 0;
  for (std::string_view part : parts) bytes += encoded_size(part);
  reserve(bytes);
  for (std::string_view part : parts) push_back(part);
}

bulk_strings::bulk_strings(std::initializer_list<std::string_view> parts) { assign_sized(parts); }

bulk_strings::bulk_strings(const std::vector<std::string>& parts) { assign_sized(parts); }

std::size_t bulk_strings::encoded_size(std::string_view part) {
  return header_size(part.size()) + part.size() + 2;
}

void bulk_strings::push_back(std::string_view part) {
  append_bulk(encoded_, part);
  ++count_;
}

namespace {

// The string at the start of `rest` (`$<len>\r\n<bytes>\r\n`, as push_back wrote it), taken
// off it.
std::string_view take_first(std::string_view& rest) {
  const auto end_of_header = rest.find('\r');
  std::size_t length = 0;
  std::from_chars(rest.data() + 1, rest.data() + end_of_header, length);
  const auto part = rest.substr(end_of_header + 2, length);
  rest.remove_prefix(end_of_header + 2 + length + 2);
  return part;
}

}  // namespace

std::string_view bulk_strings::operator[](std::size_t i) const {
  if (i >= count_) throw std::out_of_range("bulk_strings: no string at that index");
  std::string_view rest = encoded_;
  while (i-- > 0) take_first(rest);
  return take_first(rest);
}

std::vector<std::string> bulk_strings::decoded() const {
  std::vector<std::string> out;
  out.reserve(count_);
  std::string_view rest = encoded_;
  while (!rest.empty()) out.emplace_back(take_first(rest));
  return out;
}

}  // namespace relock::resp
