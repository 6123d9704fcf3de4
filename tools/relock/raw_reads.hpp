// Plain Redis commands for the CLI's own needs: status reads a lock's data as it lies in Redis,
// the demo keeps its counter there. The public API has no raw command, so this file (and only
// this one) goes through the library's internal executor; nothing internal leaks out of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <relock/client.hpp>

namespace relock_cli {

// One reply, in the CLI's own type.
struct raw_value {
  bool nil = true;
  std::string text;  // bulk strings and status replies
  std::int64_t integer = 0;
  std::vector<raw_value> elements;
};

// Runs one command through `client` and waits; throws relock::error (a server error keeps
// the server's text). Must not be called on relock's I/O thread.
raw_value raw_command(relock::client& client, std::vector<std::string> args);

// Redisson's auxiliary keys of the lock `name` (redisson-compat.md §3 and §5).
struct lock_keys {
  std::string fair_queue;    // list of waiting owners, head first
  std::string fair_timeout;  // zset owner -> the epoch ms at which it gives up
  std::string fenced_token;  // the last fencing token handed out
};
lock_keys keys_of(std::string_view name);

}  // namespace relock_cli
