// SPDX-License-Identifier: Apache-2.0
#include "lock_sets/member_address.hpp"

#include "client_core.hpp"
#include "locks/lock_access.hpp"
#include "net/endpoint.hpp"

namespace relock::detail::lock_sets {

std::string member_address(const mutex& member) {
  const std::string& url = locks::lock_access::core(member).settings().url;
  const auto target = net::parse_target(url);  // the client's own: it parsed once already
  if (target.deployment == net::target::mode::single) return target.nodes.front().address();
  return net::redacted_url(url);
}

std::string member_label(const mutex& member, std::size_t index) {
  return "member " + std::to_string(index) + " ('" + member.name() + "' on " +
         member_address(member) + ")";
}

}  // namespace relock::detail::lock_sets
