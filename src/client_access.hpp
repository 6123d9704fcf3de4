// SPDX-License-Identifier: Apache-2.0
// For relock's own code, tests and benchmarks: the core behind a public client.
#pragma once

#include <memory>

#include <relock/client.hpp>

namespace relock::detail {

struct client_access {
  static const std::shared_ptr<client_core>& core(const client& c) { return c.core_; }
};

inline const std::shared_ptr<client_core>& core_of(const client& c) {
  return client_access::core(c);
}

}  // namespace relock::detail
