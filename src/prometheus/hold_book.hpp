// SPDX-License-Identifier: Apache-2.0
// What this observer's clients hold now, key by key, for the holds gauge: a loss_event names
// only the key, so the kind and group it was counted under are remembered from its acquire.
//
// A key may be held several times at once (a re-entry, two threads' read locks, a semaphore's
// permits taken twice): one entry each. A release ends one entry of its kind; a loss ends every
// entry of the key, since a hold is lost when its key is deleted or expires, which ends them all
// (the owner a loss names is not known at acquire time). A release that finds nothing (its hold
// was lost before, or was never this client's) ends nothing, so the gauge never counts a hold
// twice nor goes below zero. No I/O, no metrics: unit-testable alone.
//
// Thread-safety: none; its owner (metrics_observer) guards it.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relock::prometheus_detail {

class hold_book {
 public:
  struct hold {
    std::string kind;
    std::string group;
  };

  void acquired(std::string_view key, std::string_view kind, std::string_view group);
  // The entry a release of `kind` on `key` ends, if there is one.
  std::optional<hold> released(std::string_view key, std::string_view kind);
  // Every entry of `key`, now ended.
  std::vector<hold> lost(std::string_view key);
  // Entries held now, over every key.
  std::size_t size() const { return size_; }

 private:
  std::map<std::string, std::vector<hold>, std::less<>> holds_;
  std::size_t size_ = 0;
};

}  // namespace relock::prometheus_detail
