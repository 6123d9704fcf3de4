// SPDX-License-Identifier: Apache-2.0
// What the synchronizers' handles share (semaphore, permit_expirable_semaphore, count_down_latch):
// their names checked once, permit counts checked before any I/O, and one way to run an
// administration script and wait for its reply.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "objects/acquire_op.hpp"
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

// The waiting loop's request for a synchronizer's try of `grant` on `key`, its waiters listening
// on `channel`: `wait` empty waits for ever, zero tries once. `hold`: the grant is a hold (a
// permit), whose owner the caller sets.
acquire_request sync_acquire_request(const std::string& key, const std::string& channel,
                                     std::optional<std::chrono::milliseconds> wait,
                                     std::stop_token stop, const grant_kind& grant,
                                     const hold_kind* hold = nullptr);

// A semaphore's administration (semaphore_admin.lua): `op` with `n`. A permit-expirable one
// passes its expiry set `timeouts` (the script takes expired permits back first), and the
// permit's id (16 bytes) for "lease".
std::int64_t semaphore_admin(client_core& core, const std::string& key, const std::string& channel,
                             const char* op, std::int64_t n, const std::string& what,
                             const std::string& timeouts = {}, std::string raw_id = {});

}  // namespace relock::detail
