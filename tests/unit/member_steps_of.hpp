// SPDX-License-Identifier: Apache-2.0
// Reading a lock-set machine's steps in tests: which members a kind of step goes to, and the
// finish if there is one.
#pragma once

#include <algorithm>
#include <vector>

#include "lock_sets/member_step.hpp"

namespace relock::test {

inline std::vector<std::size_t> members_of(const detail::lock_sets::member_steps& steps,
                                           detail::lock_sets::member_step::kind k) {
  std::vector<std::size_t> out;
  for (const auto& s : steps) {
    if (s.what == k) out.push_back(s.member);
  }
  return out;
}

inline const detail::lock_sets::member_step* step_of(const detail::lock_sets::member_steps& steps,
                                                     detail::lock_sets::member_step::kind k) {
  auto it = std::find_if(steps.begin(), steps.end(),
                         [k](const detail::lock_sets::member_step& s) { return s.what == k; });
  return it == steps.end() ? nullptr : &*it;
}

inline const detail::lock_sets::member_step* finish_of(
    const detail::lock_sets::member_steps& steps) {
  return step_of(steps, detail::lock_sets::member_step::kind::finish);
}

}  // namespace relock::test
