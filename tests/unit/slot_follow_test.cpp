// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "exec/slot_follow.hpp"

using relock::exec::place;
using relock::exec::placement;
using relock::exec::slot_owner;
using relock::exec::waiting_request;

TEST(slot_follow, table) {
  struct row {
    const char* why;
    waiting_request in;
    placement expected;
  };
  const row rows[] = {
      // Never written, its node away: the map's new owner gets it at once.
      {"queued for a dead master whose replica was promoted",
       {false, false, slot_owner::other},
       placement::move_now},
      {"queued for a dead master, no owner yet (failover under way)",
       {false, false, slot_owner::none},
       placement::stay},
      {"queued for a node that still owns the slot (a reconnect is coming)",
       {false, false, slot_owner::same},
       placement::stay},
      // Queued on a live socket: it goes out behind what was written there, in order.
      {"queued on a live socket to a node that lost the slot",
       {false, true, slot_owner::other},
       placement::stay},
      {"queued on a live socket, no owner", {false, true, slot_owner::none}, placement::stay},
      {"queued on a live socket to the owner", {false, true, slot_owner::same}, placement::stay},
      // Written: the server may have run it; decide() judges its answer or its loss.
      {"written to a node that lost the slot", {true, true, slot_owner::other}, placement::stay},
      {"written, its socket lost, the slot elsewhere",
       {true, false, slot_owner::other},
       placement::stay},
      {"written, no owner", {true, false, slot_owner::none}, placement::stay},
      {"written to the owner", {true, true, slot_owner::same}, placement::stay},
  };
  for (const auto& r : rows) EXPECT_EQ(place(r.in), r.expected) << r.why;
}
