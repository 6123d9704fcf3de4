#include "objects/naming.hpp"

namespace relock::objects {

std::string prefixed(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  if (name.find('{') != std::string_view::npos) {
    out += ':';
    out += name;
  } else {
    out += ":{";
    out += name;
    out += '}';
  }
  return out;
}

std::string suffixed(std::string_view name, std::string_view suffix) {
  std::string out;
  if (name.find('{') != std::string_view::npos) {
    out = name;
  } else {
    out = "{";
    out += name;
    out += '}';
  }
  out += ':';
  out += suffix;
  return out;
}

}  // namespace relock::objects
