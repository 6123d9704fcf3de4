// SPDX-License-Identifier: Apache-2.0
#include "waiting/take_back_book.hpp"

#include <algorithm>

namespace relock::detail::waiting {

void take_back_book::add(const id& who, release_request request) {
  pending_[who].push_back(std::move(request));
}

void take_back_book::answered(const id& who, std::string_view latch) {
  auto it = pending_.find(who);
  if (it == pending_.end()) return;
  std::erase_if(it->second, [&](const release_request& r) { return r.latch == latch; });
  if (it->second.empty()) pending_.erase(it);
}

std::vector<release_request> take_back_book::pending(const id& who) const {
  auto it = pending_.find(who);
  return it == pending_.end() ? std::vector<release_request>{} : it->second;
}

bool take_back_book::has(std::string_view key, std::string_view owner) const {
  if (pending_.empty()) return false;
  // Ordered by key, then owner: the first entry not below (key, owner) is it, if any is.
  auto it = pending_.lower_bound(std::pair<std::string_view, std::string_view>(key, owner));
  return it != pending_.end() && it->first.first == key && it->first.second == owner;
}

std::size_t take_back_book::size() const {
  std::size_t n = 0;
  for (const auto& [who, requests] : pending_) n += requests.size();
  return n;
}

}  // namespace relock::detail::waiting
