// SPDX-License-Identifier: Apache-2.0
// Messages made readable: control bytes made visible (names may hold any byte, and a message is
// one line), and the script positions Redis adds to errors taken out.
#include <cstdio>
#include <regex>

#include "cli.hpp"

namespace relock_cli {

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

std::string without_script_position(const std::string& text) {
  // Redis 7 ends an error raised inside a script with "script: SHA, on @user_script:LINE.";
  // Redis 6 starts it with "Error running script (call to f_SHA): @user_script:LINE: ". Neither
  // says anything to the user; the error's own words stay.
  static const std::regex position(
      R"((\s*script: (?:[0-9a-f]{40}, )?on @user_script:[0-9]+\.?)|)"
      R"((Error running script \(call to f_[0-9a-f]{40}\): )|(@?user_script:[0-9]+: ))");
  return std::regex_replace(text, position, "");
}

}  // namespace relock_cli
