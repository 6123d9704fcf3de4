// What the synchronizers' handles share (Semaphore, PermitExpirableSemaphore, CountDownLatch):
// their names checked once, permit counts checked before any I/O, and one way to run an
// administration script and wait for its reply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "resp/reply.hpp"

namespace relock::detail {

struct sync_names {
  std::string key;      // the name after the client's name mapper
  std::string channel;  // where its waiters listen
};
// Throws errc::invalid_argument for a bad name, or (in a cluster) a channel or latch that would
// not share the key's slot.
sync_names sync_names_of(client_core& core, const std::string& name,
                         std::string (*channel)(std::string_view key), const char* what);

// Permits are Java ints in Redisson: counts past that could not be shared with it.
inline constexpr std::int64_t max_permits = 2'147'483'647;
// Throws errc::invalid_argument unless min <= n <= max_permits (and n >= -max_permits).
void check_permits(std::int64_t n, std::int64_t min, const char* what);

// Runs `s` and waits for its reply; throws relock::error naming `what` with the server's text
// (errc::wrong_type for a name holding something else).
resp::reply eval_blocking(client_core& core, const exec::script& s, std::vector<std::string> keys,
                          std::vector<std::string> args, const std::string& what);

}  // namespace relock::detail
