// SPDX-License-Identifier: Apache-2.0
// The lock kinds beyond the plain lock (whose kinds are in waiting/lock_kind.hpp), one file each
// in this folder: what each acquires, releases and renews with.
#pragma once

#include "waiting/lock_kind.hpp"

namespace relock::detail::locks {

extern const waiting::lock_kind rwlock_read_kind;
extern const waiting::lock_kind rwlock_write_kind;
extern const waiting::lock_kind fair_lock_kind;
extern const waiting::lock_kind non_reentrant_fair_lock_kind;
extern const waiting::lock_kind fenced_lock_kind;
extern const waiting::lock_kind spin_lock_kind;

}  // namespace relock::detail::locks
