// SPDX-License-Identifier: Apache-2.0
#include <relock/red_lock.hpp>

namespace relock {

RedLock::RedLock(std::vector<Lock> members, redlock_options options)
    : lock_set(std::move(members), rule{.what = "RedLock",
                                        .quorum = true,
                                        .drift_factor = options.drift_factor,
                                        .unreached = std::move(options.unreached)}) {}

redlock_result RedLock::acquire(lock_options options) {
  auto r = acquire_blocking(owner::current_thread(), std::move(options), true);
  return {r.acquired, r.validity, r.held};
}

}  // namespace relock
