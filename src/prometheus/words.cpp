// SPDX-License-Identifier: Apache-2.0
#include "prometheus/words.hpp"

#include <relock/errors.hpp>

namespace relock::prometheus_detail {

std::string_view word(acquire_outcome outcome) {
  switch (outcome) {
    case acquire_outcome::acquired:
      return "acquired";
    case acquire_outcome::not_acquired:
      return "not_acquired";
    case acquire_outcome::failed:
      return "failed";
    case acquire_outcome::cancelled:
      return "cancelled";
  }
  return "failed";
}

std::string_view word(queue_operation operation) {
  switch (operation) {
    case queue_operation::offer:
      return "offer";
    case queue_operation::take:
      return "take";
    case queue_operation::transfer:
      return "transfer";
  }
  return "take";
}

std::string_view word(queue_outcome outcome) {
  switch (outcome) {
    case queue_outcome::done:
      return "done";
    case queue_outcome::empty:
      return "empty";
    case queue_outcome::failed:
      return "failed";
    case queue_outcome::cancelled:
      return "cancelled";
  }
  return "failed";
}

std::string_view word(topology_change change) {
  switch (change) {
    case topology_change::slot_moved:
      return "slot_moved";
    case topology_change::new_master:
      return "new_master";
  }
  return "slot_moved";
}

std::string_view loss_word(std::error_code reason) {
  if (reason == errc::lock_lost) return "lock_lost";
  if (reason == errc::renewal_failed) return "renewal_failed";
  return "other";
}

}  // namespace relock::prometheus_detail
