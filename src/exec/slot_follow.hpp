// SPDX-License-Identifier: Apache-2.0
// What becomes of a request waiting on a connection when the topology changes (issue #30:
// cleanup follows its slot). A Cluster refresh that names a new master for a slot (a failover
// promoted the replica of a node that died) concerns every request still queued for the old
// one: a release, a take-back, a renewal or the next lock try would otherwise wait there for a
// reconnect that never comes, until its deadline (command_timeout, or a latch's whole window),
// seconds after the promotion. A pure function, so a table can test every case: the executor
// asks it for each waiting request after a refresh and performs the answer.
#pragma once

namespace relock::exec {

// Who the topology says serves the request's slot now.
enum class slot_owner {
  same,   // the node the request waits for
  other,  // another node: a replica was promoted, or the slot migrated
  none,   // no master: a failover is under way, and a later refresh will say
};

struct waiting_request {
  bool written = false;        // it reached the socket: the server may have run it
  bool connection_up = false;  // its connection is ready
  slot_owner owner = slot_owner::same;
};

enum class placement {
  stay,      // leave it: it goes out, is answered or fails where it is
  move_now,  // take it back unwritten and send it where its slot lives now
};

placement place(const waiting_request& r);

}  // namespace relock::exec
