// SPDX-License-Identifier: Apache-2.0
#include "topology/router.hpp"

namespace relock::topology {

std::optional<node> router::node_for(std::string_view key) const {
  if (single_) return single_;
  if (const node* master = map_.master_of(slot_of(key))) return *master;
  return std::nullopt;
}

void router::moved(std::uint16_t slot, node to) {
  map_.moved(slot, std::move(to));
  complete_ = map_.covers_all();
  stale_ = true;
}

void router::refreshed(slot_map map, time_point now) {
  auto reachable = map.for_ports(ports_);
  if (!reachable) return;
  map_ = std::move(*reachable);
  complete_ = map_.covers_all();
  stale_ = false;
  last_refresh_ = now;
}

bool router::refresh_due(time_point now) const {
  if (single_) return false;
  if (stale_ || !complete_) return now - last_refresh_ >= min_gap;
  return now - last_refresh_ >= period;
}

}  // namespace relock::topology
