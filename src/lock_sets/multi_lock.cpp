// SPDX-License-Identifier: Apache-2.0
#include <relock/multi_lock.hpp>

#include "lock_sets/lock_set_state.hpp"

namespace relock {

multi_lock::multi_lock(std::vector<mutex> members)
    : lock_set(std::move(members), detail::lock_sets::lock_set_rule{.what = "multi-lock"}) {}

}  // namespace relock
