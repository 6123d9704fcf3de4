// SPDX-License-Identifier: Apache-2.0
// relock top: which object a key found by SCAN belongs to. A lock, a queue or a semaphore keeps
// auxiliary keys beside its own (a fair lock's queue, a fenced lock's counter, read holds'
// timeouts, a delayed queue's keys: data-layout §1.2, §3-§5, §7, §9); read back, each names its
// object, so that top shows one row per object and none per auxiliary key. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>

namespace relock_cli {

// The object a key belongs to: the key itself when it is no auxiliary key of any.
struct key_owner {
  std::string name;
  bool auxiliary = false;  // the key is one of the object's derived keys, not its own
};

key_owner object_of(std::string_view key);

// data-layout §1.2's rule for derived names: "prefix:{name}", or "prefix:name" when the name has
// a '{' of its own. For the channels top counts subscribers of.
std::string prefixed(std::string_view prefix, std::string_view name);

}  // namespace relock_cli
