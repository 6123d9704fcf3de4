// SPDX-License-Identifier: Apache-2.0
// A few nodes of a node-based container (std::unordered_map, std::unordered_set, std::map)
// kept after their entries left, for the next entries to reuse: a steady flow of entries in
// and out then allocates nothing (tests/allocations counts it).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace relock::containers {

template <class Container, std::size_t Kept = 8>
class spare_nodes {
 public:
  using node_type = typename Container::node_type;

  spare_nodes() { nodes_.reserve(Kept); }

  // Unlinks `it` from `c` and keeps its node, key and value as they are, unless Kept are kept.
  void keep(Container& c, typename Container::iterator it) { keep(c.extract(it)); }
  void keep(node_type node) {
    if (nodes_.size() < Kept) nodes_.push_back(std::move(node));
  }

  // A kept node, or an empty handle when none is: the caller then allocates a new entry.
  node_type take() {
    if (nodes_.empty()) return {};
    node_type node = std::move(nodes_.back());
    nodes_.pop_back();
    return node;
  }

 private:
  std::vector<node_type> nodes_;
};

}  // namespace relock::containers
