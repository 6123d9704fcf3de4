// SPDX-License-Identifier: Apache-2.0
// How status and unlock say that a name holds something else than a lock.
#include "cli.hpp"

namespace relock_cli {

std::string not_a_lock(const relock::lock_info& info) {
  const std::string name = "'" + info.name + "'";
  // By what the data shows, as status names it: a Redis string may be either of these.
  if (info.kind == relock::object_kind::permit_semaphore) {
    return name +
           " is a permit-expirable semaphore, not a lock; give a stuck permit back with "
           "`relock semaphore release " +
           info.name + " PERMIT` (status lists them)";
  }
  if (info.kind == relock::object_kind::counter) {
    return name +
           " is a counter (a semaphore's available permits or a count-down latch's "
           "count), not a lock";
  }
  if (info.redis_type == "hash") {
    return name + " is a Redis hash, not a lock: its fields are not hold counts";
  }
  // Nothing under the name itself: a fencing token, queue or timeout key of another type.
  if (info.redis_type == "none") {
    return name + " is not a lock: the lock family's other keys for it hold data of another shape";
  }
  return name + " is a Redis " + info.redis_type + ", not a lock";
}

}  // namespace relock_cli
