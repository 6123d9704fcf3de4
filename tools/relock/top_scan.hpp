// SPDX-License-Identifier: Apache-2.0
// relock top: which objects there are. SCAN (never KEYS: it would stop a busy server for the
// whole keyspace) on every master, a page of up to 1000 keys at a time, each key read back to the
// object it belongs to (top_names.hpp).
#pragma once

#include <string>
#include <vector>

#include <relock/client.hpp>

namespace relock_cli {

// The names, sorted, of the objects whose names match `pattern` (as SCAN MATCH reads it), found
// on `masters`. Besides SCAN MATCH `pattern`, a pattern other than "*" also has SCAN look at
// Redisson's own keys (redisson_*), where a fair lock's queue, a fenced lock's counter or a
// delayed queue can be all there is of an object. Throws relock::error when a master cannot
// be read (a refused SCAN included).
std::vector<std::string> find_objects(const relock::client& client,
                                      const std::vector<relock::server_node>& masters,
                                      const std::string& pattern);

}  // namespace relock_cli
