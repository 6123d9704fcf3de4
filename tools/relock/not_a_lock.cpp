// How status and unlock say that a name holds something else than a lock.
#include "cli.hpp"

namespace relock_cli {

std::string not_a_lock(const relock::lock_info& info) {
  const std::string name = "'" + info.name + "'";
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
