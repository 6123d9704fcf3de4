// SPDX-License-Identifier: Apache-2.0
// How the lock sets name a member in what they report: by its place in the set and its server,
// since a red_lock's members share one name (issue 30).
#pragma once

#include <cstddef>
#include <string>

#include <relock/lock.hpp>

namespace relock::detail::lock_sets {

// The member's server as its client knows it: host:port from a redis:// URL, else (a cluster
// or Sentinel client) the URL with its password hidden.
std::string member_address(const mutex& member);

// "member 2 ('job' on 10.0.0.3:6379)": the member at `index` of its set.
std::string member_label(const mutex& member, std::size_t index);

}  // namespace relock::detail::lock_sets
