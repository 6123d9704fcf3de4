// SPDX-License-Identifier: Apache-2.0
// The lock sets (MultiLock, RedLock) drive their members through the same internal calls as
// Lock's own public forms, which carry a detail for humans beside each outcome.
#pragma once

#include <relock/lock.hpp>

namespace relock::detail {

struct lock_access {
  using acquire_done = Lock::acquire_done;
  using release_done = Lock::release_done;

  static void acquire(Lock& l, owner who, lock_options o, bool empty_wait_is_forever,
                      acquire_done done) {
    l.start_acquire(who, std::move(o), empty_wait_is_forever, std::move(done));
  }
  static void release(Lock& l, owner who, release_done done) {
    l.start_release(who, std::move(done));
  }
  static client_core& core(const Lock& l) { return l.core(); }
};

}  // namespace relock::detail
