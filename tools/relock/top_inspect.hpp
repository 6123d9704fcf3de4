// SPDX-License-Identifier: Apache-2.0
// relock top: what each object found holds, as client::inspect reads it (and inspect_queue for
// a queue), in rows. The inspects go out together, a window of them at a time, so a refresh of
// many objects costs a few round trips, not one per object.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "top_rows.hpp"

namespace relock_cli {

// The objects `names` hold now, holders' processes and subscribers not yet looked up. A name
// that holds nothing top shows (gone since the scan, another Redis type, a string that is no
// count) is left out; so is one top may not read (outside the ACL user's keys), counted in
// `refused`. Throws relock::error when Redis does not answer.
std::vector<top_object> read_objects(const relock::client& client,
                                     const std::vector<std::string>& names, std::size_t& refused);

}  // namespace relock_cli
