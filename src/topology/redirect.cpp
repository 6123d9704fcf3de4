// SPDX-License-Identifier: Apache-2.0
#include "topology/redirect.hpp"

#include "topology/slot.hpp"

#include <charconv>

namespace relock::topology {
namespace {

// A whole field of decimal digits, at most `max`. from_chars neither throws nor reads a sign,
// and checking that it consumed the whole field rejects "12ab" and "".
std::optional<std::uint32_t> parse_number(std::string_view field, std::uint32_t max) {
  std::uint32_t value = 0;
  const char* end = field.data() + field.size();
  auto [stop, error] = std::from_chars(field.data(), end, value);
  if (field.empty() || error != std::errc{} || stop != end || value > max) return std::nullopt;
  return value;
}

// Splits off the text before the first space; `rest` keeps what follows it.
std::string_view take_field(std::string_view& rest) {
  auto space = rest.find(' ');
  auto field = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return field;
}

}  // namespace

std::optional<redirect> parse_redirect(std::string_view error_text) {
  std::string_view rest = error_text;
  auto word = take_field(rest);
  auto slot_field = take_field(rest);
  auto endpoint = rest;  // the last field: it must hold no further space

  enum redirect::kind kind;
  if (word == "MOVED") {
    kind = redirect::kind::moved;
  } else if (word == "ASK") {
    kind = redirect::kind::ask;
  } else {
    return std::nullopt;
  }
  auto slot = parse_number(slot_field, slot_count - 1);
  if (!slot || endpoint.find(' ') != std::string_view::npos) return std::nullopt;

  // The last colon, not the first: "::1:7000" is host "::1", port 7000.
  auto colon = endpoint.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto port = parse_number(endpoint.substr(colon + 1), 65535);
  if (!port || *port == 0) return std::nullopt;

  return redirect{kind, static_cast<std::uint16_t>(*slot), std::string(endpoint.substr(0, colon)),
                  static_cast<std::uint16_t>(*port)};
}

}  // namespace relock::topology
