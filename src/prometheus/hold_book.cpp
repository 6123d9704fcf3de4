// SPDX-License-Identifier: Apache-2.0
#include "prometheus/hold_book.hpp"

#include <algorithm>
#include <utility>

namespace relock::prometheus_detail {

void hold_book::acquired(std::string_view key, std::string_view kind, std::string_view group) {
  auto it = holds_.find(key);
  if (it == holds_.end()) it = holds_.emplace(std::string(key), std::vector<hold>{}).first;
  it->second.push_back({std::string(kind), std::string(group)});
  ++size_;
}

std::optional<hold_book::hold> hold_book::released(std::string_view key, std::string_view kind) {
  auto it = holds_.find(key);
  if (it == holds_.end()) return std::nullopt;
  auto& entries = it->second;
  // The latest of its kind: a re-entry ends before the hold it re-entered.
  auto entry =
      std::find_if(entries.rbegin(), entries.rend(), [&](const hold& h) { return h.kind == kind; });
  if (entry == entries.rend()) return std::nullopt;
  hold ended = std::move(*entry);
  entries.erase(std::next(entry).base());
  if (entries.empty()) holds_.erase(it);
  --size_;
  return ended;
}

std::vector<hold_book::hold> hold_book::lost(std::string_view key) {
  auto it = holds_.find(key);
  if (it == holds_.end()) return {};
  std::vector<hold> ended = std::move(it->second);
  holds_.erase(it);
  size_ -= ended.size();
  return ended;
}

}  // namespace relock::prometheus_detail
