// SPDX-License-Identifier: Apache-2.0
#include "resp/spare_payloads.hpp"

#include <utility>
#include <vector>

namespace relock::resp {
namespace {

std::vector<std::string>& spares() {
  thread_local std::vector<std::string> kept;
  return kept;
}

}  // namespace

std::string spare_payloads::take() {
  auto& kept = spares();
  if (kept.empty()) return {};
  std::string payload = std::move(kept.back());
  kept.pop_back();
  return payload;
}

void spare_payloads::give(std::string&& payload) {
  // A string within its own small buffer has nothing worth keeping.
  if (payload.capacity() <= std::string().capacity()) return;
  auto& kept = spares();
  if (kept.size() >= spare_payloads::kept || payload.capacity() > largest) {
    std::string().swap(payload);  // freed now, as before
    return;
  }
  if (kept.capacity() == 0) kept.reserve(spare_payloads::kept);
  payload.clear();
  kept.push_back(std::move(payload));
}

}  // namespace relock::resp
