// SPDX-License-Identifier: Apache-2.0
// relock top: who listens on each object's channel. A waiting relock or Redisson subscribes to
// the channel its object's releases are published on (data-layout §1.4, §8), one subscription
// per client and channel, so the count says how many processes wait, mostly (a `relock run`
// holder listens too, for the loss of its hold). A fair lock's waiters listen on channels of
// their own: its queue counts them.
#pragma once

#include <vector>

#include <relock/client.hpp>

#include "top_rows.hpp"

namespace relock_cli {

// Fills in `subscribers` of every lock, semaphore and latch in `objects`: classic subscriptions
// (PUBSUB NUMSUB) on every master, where each subscriber may have connected, and sharded ones
// (PUBSUB SHARDNUMSUB, Redis 7) on the object's own node. Left empty when every master refuses
// NUMSUB (an ACL without it). Throws relock::error when a master does not answer.
void count_subscribers(const relock::client& client,
                       const std::vector<relock::server_node>& masters,
                       std::vector<top_object>& objects);

}  // namespace relock_cli
