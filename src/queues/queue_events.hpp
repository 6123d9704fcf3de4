// SPDX-License-Identifier: Apache-2.0
// A queue call's observer event (relock::observer::on_queue), for the calls that either work
// or fail (an offer, a transfer); a take, which may also find nothing, says its own outcome.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <system_error>

#include <relock/errors.hpp>
#include <relock/observer.hpp>

namespace relock::detail::queues {

// Tells `o` (if any) that `operation` on `key` ended with `ec`, begun at `since`.
inline void tell_queue(observer* o, queue_operation operation, std::string_view key,
                       std::error_code ec, std::chrono::steady_clock::time_point since,
                       std::int64_t elements) {
  if (o == nullptr) return;
  o->on_queue({.operation = operation,
               .key = key,
               .outcome = !ec                     ? queue_outcome::done
                          : ec == errc::cancelled ? queue_outcome::cancelled
                                                  : queue_outcome::failed,
               .error = ec,
               .waited = std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - since),
               .elements = elements});
}

}  // namespace relock::detail::queues
