// SPDX-License-Identifier: Apache-2.0
// The label values of relock's events: each outcome, operation and change in one word, as the
// metrics carry them (docs/metrics.md). A fixed, small set, so labels stay bounded.
#pragma once

#include <string_view>
#include <system_error>

#include <relock/observer.hpp>

namespace relock::prometheus_detail {

std::string_view word(acquire_outcome outcome);
std::string_view word(queue_operation operation);
std::string_view word(queue_outcome outcome);
std::string_view word(topology_change change);
// lock_lost or renewal_failed; "other" for a reason relock does not give today.
std::string_view loss_word(std::error_code reason);

}  // namespace relock::prometheus_detail
