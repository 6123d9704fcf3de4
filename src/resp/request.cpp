// SPDX-License-Identifier: Apache-2.0
#include "resp/request.hpp"

#include <charconv>
#include <iterator>

namespace relock::resp {
namespace {

std::size_t digits(std::size_t n) {
  std::size_t d = 1;
  while (n >= 10) n /= 10, ++d;
  return d;
}

void put_header(std::string& out, char type, std::size_t n) {
  char number[24];
  out += type;
  out.append(number, std::to_chars(number, number + sizeof number, n).ptr);
  out += "\r\n";
}

template <class Range>
std::size_t encoded_size(const Range& args) {
  std::size_t size = 0;
  for (const auto& arg : args) size += 1 + digits(arg.size()) + 2 + arg.size() + 2;
  return size;
}

template <class Range>
void put_arguments(std::string& out, const Range& args) {
  for (const auto& arg : args) {
    put_header(out, '$', arg.size());
    out.append(arg.data(), arg.size());
    out += "\r\n";
  }
}

// RESP's array of bulk strings, written in place: `*N\r\n` then `$len\r\n<bytes>\r\n` per
// argument, the ranges one after another. Sized first, so a command costs at most one growth
// of `out` (none when it has room).
template <class... Ranges>
void encode(std::string& out, const Ranges&... ranges) {
  const std::size_t count = (std::size(ranges) + ...);
  out.reserve(out.size() + 1 + digits(count) + 2 + (encoded_size(ranges) + ...));
  put_header(out, '*', count);
  (put_arguments(out, ranges), ...);
}

}  // namespace

void request::push(std::initializer_list<std::string_view> args) {
  encode(payload_, args);
  ++commands_;
}

void request::push(std::span<const std::string_view> args) {
  encode(payload_, args);
  ++commands_;
}

void request::push(std::span<const std::string> args) {
  encode(payload_, args);
  ++commands_;
}

void request::push(std::initializer_list<std::string_view> head, std::span<const std::string> more,
                   std::span<const std::string> last) {
  encode(payload_, head, more, last);
  ++commands_;
}

}  // namespace relock::resp
