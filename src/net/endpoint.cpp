#include "net/endpoint.hpp"

#include <charconv>

#include <relock/errors.hpp>

namespace relock::net {
namespace {

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  throw error(errc::invalid_argument,
              "bad Redis URL '" + redacted_url(url) + "': " + std::string(why));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) bad_url(url, "truncated %-escape");
    int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) bad_url(url, "bad %-escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

template <class T>
T parse_number(std::string_view url, std::string_view text, std::string_view what) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    bad_url(url, std::string(what) + " '" + std::string(text) + "' is not a number in range");
  }
  return value;
}

}  // namespace

std::string redacted_url(std::string_view url) {
  // A password follows the first ':' of the credentials.
  const auto scheme_end = url.find("://");
  const auto from = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  // As parse_url reads it: the credentials end at the last '@', wherever a '/' is.
  const auto authority = url.substr(from);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const auto colon = authority.find(':');
  // A lone credential is a password (as parse_url and redis-cli read it): all of it goes.
  const auto secret = (colon == std::string_view::npos || colon > at) ? 0 : colon + 1;
  return std::string(url.substr(0, from + secret)) + "***" + std::string(url.substr(from + at));
}

std::string endpoint::address() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

endpoint parse_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) bad_url(url, "it must start with redis://");
  std::string_view rest = url.substr(scheme.size());
  endpoint ep;

  // Credentials end at the last '@' (a password may hold '/' or '@'; a database never does),
  // so the path is looked for only after them.
  std::string_view credentials;
  bool has_credentials = false;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    credentials = rest.substr(0, at);
    has_credentials = true;
    rest = rest.substr(at + 1);
  }
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) ep.db = parse_number<int>(url, db, "database");
    if (ep.db < 0) bad_url(url, "negative database");
    rest = rest.substr(0, slash);
  }
  if (has_credentials) {
    if (auto colon = credentials.find(':'); colon != std::string_view::npos) {
      ep.user = percent_decode(url, credentials.substr(0, colon));
      ep.password = percent_decode(url, credentials.substr(colon + 1));
    } else {
      // redis://secret@host: a lone credential is the password, as redis-cli reads it.
      ep.password = percent_decode(url, credentials);
    }
  }
  std::string_view port;
  bool port_given = false;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) bad_url(url, "unclosed [ in IPv6 host");
    ep.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad_url(url, "junk after IPv6 host");
      port = after.substr(1);
      port_given = true;
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    ep.host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
    port_given = true;
  } else {
    ep.host = std::string(rest);
  }
  if (ep.host.empty()) bad_url(url, "no host");
  // "host:" is a typo, not a request for the default port.
  if (port_given && port.empty()) bad_url(url, "empty port after ':'");
  if (!port.empty()) {
    ep.port = parse_number<std::uint16_t>(url, port, "port");
    if (ep.port == 0) bad_url(url, "port 0");
  }
  return ep;
}

}  // namespace relock::net
