// SPDX-License-Identifier: Apache-2.0
#include <relock/red_lock.hpp>

#include "lock_sets/lock_set_state.hpp"

namespace relock {

red_lock::red_lock(std::vector<mutex> members, redlock_options options)
    : lock_set(std::move(members),
               detail::lock_sets::lock_set_rule{.what = "red_lock",
                                                .quorum = true,
                                                .drift_factor = options.drift_factor,
                                                .unreached = std::move(options.unreached)}) {}

redlock_result red_lock::acquire(lock_options options) {
  auto r = acquire_blocking(owner::current_thread(), std::move(options), true);
  return {r.acquired, r.validity, r.held};
}

}  // namespace relock
