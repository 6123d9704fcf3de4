// SPDX-License-Identifier: Apache-2.0
// relock top: one refresh. On every master: CLIENT NO-TOUCH first, so that top's reads leave the
// keys' LRU/LFU alone where the server allows it (Redis 7.2+); SCAN for the objects; inspect
// each once; then who holds (CLIENT LIST) and who waits (PUBSUB).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "top_rows.hpp"

namespace relock_cli {

struct top_snapshot {
  std::vector<top_object> objects;    // unsorted
  bool no_touch_unavailable = false;  // a master refused CLIENT NO-TOUCH (older, or an ACL)
  std::size_t refused = 0;            // names found that the ACL user may not read
};

// Reads the objects whose names match `pattern`. The client must have one command connection
// per node (config::command_connections = 1): CLIENT NO-TOUCH holds for the connection it is
// sent on, and every read must ride that one. Throws relock::error when Redis does not answer.
top_snapshot refresh(const relock::client& client, const std::string& pattern);

}  // namespace relock_cli
