// SPDX-License-Identifier: Apache-2.0
#include "resp/request.hpp"

#include <iterator>

namespace relock::resp {
namespace {

template <class Range>
std::size_t encoded_size(const Range& args) {
  std::size_t size = 0;
  for (const auto& arg : args) size += bulk_strings::encoded_size(arg);
  return size;
}
std::size_t encoded_size(const bulk_strings& args) { return args.encoded().size(); }

template <class Range>
void put_arguments(std::string& out, const Range& args) {
  for (std::string_view arg : args) append_bulk(out, arg);
}
void put_arguments(std::string& out, const bulk_strings& args) { out += args.encoded(); }

// RESP's array of bulk strings, written in place: `*N\r\n` then `$len\r\n<bytes>\r\n` per
// argument, the ranges one after another. Sized first, so a command costs at most one growth
// of `out` (none when it has room).
template <class... Ranges>
void encode(std::string& out, const Ranges&... ranges) {
  const std::size_t count = (std::size(ranges) + ...);
  out.reserve(out.size() + header_size(count) + (encoded_size(ranges) + ...));
  append_header(out, '*', count);
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

void request::push(std::initializer_list<std::string_view> head, const bulk_strings& more,
                   const bulk_strings& last) {
  encode(payload_, head, more, last);
  ++commands_;
}

void request::push(std::initializer_list<std::string_view> head, std::span<const std::string> more,
                   std::span<const std::string> last) {
  encode(payload_, head, more, last);
  ++commands_;
}

}  // namespace relock::resp
