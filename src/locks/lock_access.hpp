// SPDX-License-Identifier: Apache-2.0
// The lock sets (multi_lock, red_lock) drive their members through the same internal calls as
// mutex's own public forms, which carry a detail for humans beside each outcome.
#pragma once

#include <relock/lock.hpp>

namespace relock::detail::locks {

struct lock_access {
  using acquire_done = mutex::acquire_done;
  using release_done = mutex::release_done;

  static void acquire(mutex& l, owner who, lock_options o, bool empty_wait_is_forever,
                      acquire_done done) {
    l.start_acquire(who, std::move(o), empty_wait_is_forever, std::move(done));
  }
  static void release(mutex& l, owner who, release_done done) {
    l.start_release(who, std::move(done));
  }
  static client_core& core(const mutex& l) { return l.core(); }
};

}  // namespace relock::detail::locks
