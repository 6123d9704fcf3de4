// SPDX-License-Identifier: Apache-2.0
// The spin lock as a waiting::lock_kind: the reentrant lock's data and scripts (data-layout §2),
// but its waiters back off and try again (config::spin_backoff) instead of listening, and its
// releases publish nothing, as Redisson's RSpinLock: no pub/sub at all. A plain lock's waiter on
// the same name therefore hears of a spin release only when it next looks (its holder's TTL).
#include "locks/lock_kinds.hpp"

namespace relock::detail::locks {
namespace {

// The reentrant calls, with nothing to publish.
waiting::script_call release_call(const waiting::release_context& c) {
  waiting::release_context silent = c;
  silent.publish_command = {};
  return waiting::plain_lock::release_call(silent);
}
waiting::script_call force_release_call(const waiting::force_release_context& c) {
  waiting::force_release_context silent = c;
  silent.publish_command = {};
  return waiting::plain_lock::force_release_call(silent);
}

}  // namespace

// No `wakes`: its waiters back off instead of listening.
constinit const waiting::lock_kind spin_lock_kind{
    {.acquire = waiting::plain_lock::acquire,
     .acquire_call = waiting::plain_lock::acquire_call,
     .read_acquire = waiting::read_lock_reply,
     .channel = waiting::plain_lock::channel},
    waiting::plain_lock::hold("spin lock", release_call),
    waiting::plain_lock::force_release,
    force_release_call};

}  // namespace relock::detail::locks
