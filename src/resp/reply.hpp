// SPDX-License-Identifier: Apache-2.0
// A decoded RESP2 reply: the one value type every layer passes around.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relock::resp {

enum class reply_type : std::uint8_t { nil, status, error, integer, string, array };

struct reply {
  reply_type type = reply_type::nil;
  std::string str;              // status, error and string (bulk) payloads
  std::int64_t integer = 0;     // integer payload
  std::vector<reply> elements;  // array payload

  static reply make_nil() { return {}; }
  static reply make_status(std::string s) { return {reply_type::status, std::move(s), 0, {}}; }
  static reply make_error(std::string s) { return {reply_type::error, std::move(s), 0, {}}; }
  static reply make_integer(std::int64_t v) { return {reply_type::integer, {}, v, {}}; }
  static reply make_string(std::string s) { return {reply_type::string, std::move(s), 0, {}}; }
  static reply make_array(std::vector<reply> e) { return {reply_type::array, {}, 0, std::move(e)}; }

  bool is_nil() const { return type == reply_type::nil; }
  bool is_error() const { return type == reply_type::error; }
  bool is_integer() const { return type == reply_type::integer; }
  bool is_string() const { return type == reply_type::string || type == reply_type::status; }
  bool is_array() const { return type == reply_type::array; }

  // The error's first word ("NOSCRIPT", "MOVED", "WRONGTYPE"...), empty when not an error.
  std::string_view error_code() const {
    if (!is_error()) return {};
    std::string_view s = str;
    return s.substr(0, s.find(' '));
  }

  friend bool operator==(const reply&, const reply&) = default;
};

// The value after the string `name` in a flat array of names and values (HGETALL, CLUSTER
// SHARDS, SENTINEL REPLICAS), or nullptr.
const reply* value_of(const reply& pairs, std::string_view name);

// The text of a string or status reply; empty for anything else, or for none.
inline std::string_view text_of(const reply* r) {
  return r && r->is_string() ? std::string_view(r->str) : std::string_view();
}

// Human-readable form for logs and test failure messages.
std::string to_string(const reply& r);

}  // namespace relock::resp
