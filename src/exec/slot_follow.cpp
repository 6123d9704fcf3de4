// SPDX-License-Identifier: Apache-2.0
#include "exec/slot_follow.hpp"

namespace relock::exec {

placement place(const waiting_request& r) {
  // The server may have run it: its reply, its deadline or the loss of its connection decides,
  // through decide(), which sends an idempotent request again and never any other blindly.
  if (r.written) return placement::stay;
  // Queued on a live socket, it is written next, behind requests for the same keys that may
  // still run there: moving it ahead of them could reorder one owner's commands. A node that
  // lost the slot answers MOVED, which decide() follows.
  if (r.connection_up) return placement::stay;
  // Never written and its node away: no server has seen it, so it may go anywhere at once; but
  // only where the topology names an owner (none: a failover under way, the next map says).
  return r.owner == slot_owner::other ? placement::move_now : placement::stay;
}

}  // namespace relock::exec
