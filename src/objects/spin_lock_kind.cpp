// SPDX-License-Identifier: Apache-2.0
// The spin lock as a lock_kind table: the reentrant lock's data and scripts (data-layout §2),
// but its waiters back off and try again (config::spin_backoff) instead of listening, and its
// releases publish nothing, as Redisson's RSpinLock: no pub/sub at all. A plain lock's waiter on
// the same name therefore hears of a spin release only when it next looks (its holder's TTL).
#include "objects/lock_kind.hpp"

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

lock_kind spin() {
  lock_kind k = plain_lock::table("spin lock", plain_lock::acquire);
  k.release_call = release_call;
  k.force_release_call = force_release_call;
  k.spins = true;
  return k;
}

}  // namespace

const lock_kind spin_lock_kind = spin();

}  // namespace relock::detail
