// SPDX-License-Identifier: Apache-2.0
// relock top --json: one document, {"objects": [...], "matched": N}, each object with every
// field top knows of (null where it does not apply to the kind), for scripts and dashboards.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "top_rows.hpp"

namespace relock_cli {

// `objects` sorted; at most `limit` of them (0: all); `matched` counts them all.
std::string top_json(const std::vector<top_object>& objects, std::size_t limit);

}  // namespace relock_cli
