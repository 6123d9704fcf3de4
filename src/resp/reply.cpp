// SPDX-License-Identifier: Apache-2.0
#include "resp/reply.hpp"

namespace relock::resp {

const reply* value_of(const reply& pairs, std::string_view name) {
  for (std::size_t i = 0; i + 1 < pairs.elements.size(); i += 2) {
    if (pairs.elements[i].is_string() && pairs.elements[i].str == name) {
      return &pairs.elements[i + 1];
    }
  }
  return nullptr;
}

std::string to_string(const reply& r) {
  switch (r.type) {
    case reply_type::nil:
      return "(nil)";
    case reply_type::status:
      return r.str;
    case reply_type::error:
      return "(error) " + r.str;
    case reply_type::integer:
      return "(integer) " + std::to_string(r.integer);
    case reply_type::string:
      return "\"" + r.str + "\"";
    case reply_type::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < r.elements.size(); ++i) {
        if (i != 0) out += ", ";
        out += to_string(r.elements[i]);
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace relock::resp
