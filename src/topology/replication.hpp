// SPDX-License-Identifier: Apache-2.0
// Replica sync's two decisions (data-layout §1): how many replicas a lock write's WAIT names,
// and whether its answer is enough. No I/O: the executor sends, the watchers count replicas.
#pragma once

#include <algorithm>
#include <cstdint>

#include <relock/config.hpp>

namespace relock::topology {

struct replication {
  replica_sync_mode mode = replica_sync_mode::auto_detect;
  // Replicas that could take over from the master: Sentinel's healthy replicas of it, the
  // master's own online replicas when no Sentinel watches, or an explicit list's size.
  int known_replicas = 0;

  // The WAIT's first argument; 0: no WAIT. Sized by what is known rather than by 1, so WAIT
  // returns early only once every replica has the write, and the count of acknowledgements
  // tells the operator how far the write got.
  int replicas_to_wait() const {
    switch (mode) {
      case replica_sync_mode::off:
        return 0;
      case replica_sync_mode::on:
        return std::max(known_replicas, 1);  // with none known, nothing can acknowledge
      case replica_sync_mode::auto_detect:
        break;
    }
    return std::max(known_replicas, 0);
  }

  // One replica that has the write is enough: a failover promotes the replica furthest ahead.
  static bool synced(std::int64_t acknowledged) { return acknowledged >= 1; }
};

}  // namespace relock::topology
