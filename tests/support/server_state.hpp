// SPDX-License-Identifier: Apache-2.0
// What tests ask a server about itself through a raw client: clients blocked in a command
// (a BLPOP waiting), and an ACL user set up with given rules.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/readme_blocks.hpp"

namespace relock::test {

// INFO's blocked_clients: connections waiting in a blocking command; -1 when INFO lacks it.
inline long long blocked_clients(raw_client& raw) {
  const std::string info = raw.command({"INFO", "clients"}).str;
  const auto at = info.find("blocked_clients:");
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + 16));
}

// ACL SETUSER `user` afresh (reset), on, with `password` and exactly `rules`; throws when the
// server refuses it.
inline void set_acl_user(raw_client& raw, const std::string& user, const std::string& password,
                         const std::string& rules) {
  std::vector<std::string> setuser{"ACL", "SETUSER", user, "reset", "on", ">" + password};
  for (auto& word : acl_words(rules)) setuser.push_back(std::move(word));
  const auto said = raw.command(setuser);
  if (said.is_error()) {
    throw std::runtime_error(raw.host() + ":" + std::to_string(raw.port()) +
                             " refused ACL SETUSER: " + said.str);
  }
}

}  // namespace relock::test
