// SPDX-License-Identifier: Apache-2.0
// The spin lock as a lock_kind: the reentrant lock's data and scripts (data-layout §2),
// but its waiters back off and try again (config::spin_backoff) instead of listening, and its
// releases publish nothing, as Redisson's RSpinLock: no pub/sub at all. A plain lock's waiter on
// the same name therefore hears of a spin release only when it next looks (its holder's TTL).
#include "waiting/lock_kind.hpp"

namespace relock::detail {
namespace {

// The reentrant calls, with nothing to publish.
script_call release_call(const release_context& c) {
  release_context silent = c;
  silent.publish_command = {};
  return plain_lock::release_call(silent);
}
script_call force_release_call(const force_release_context& c) {
  force_release_context silent = c;
  silent.publish_command = {};
  return plain_lock::force_release_call(silent);
}

}  // namespace

// No `wakes`: its waiters back off instead of listening.
constinit const lock_kind spin_lock_kind{{.acquire = plain_lock::acquire,
                                          .acquire_call = plain_lock::acquire_call,
                                          .read_acquire = read_lock_reply,
                                          .channel = plain_lock::channel,
                                          .waiter_channel = plain_lock::waiter_channel},
                                         plain_lock::hold("spin lock", release_call),
                                         plain_lock::force_release,
                                         force_release_call};

}  // namespace relock::detail
