// Where to connect and how to introduce ourselves, parsed from a redis:// URL.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace relock::net {

struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string user;      // ACL user; empty = AUTH with the password alone
  std::string password;  // empty = no AUTH
  int db = 0;

  std::string address() const;  // host:port, [v6]:port
};

// The URL with its password replaced by ***, for every message that shows a URL.
std::string redacted_url(std::string_view url);

// Parses redis://[user[:password]@]host[:port][/db]; percent-escapes in user and password are
// decoded. Throws relock::error(errc::invalid_argument) naming what is wrong.
endpoint parse_url(std::string_view url);

}  // namespace relock::net
