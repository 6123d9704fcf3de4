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
#include "resp/reply.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/blocking_call.hpp"

namespace relock::detail::synchronizers {

struct synchronizer_names {
  std::string key;      // the name after the client's name mapper
  std::string channel;  // where its waiters listen
};
// Throws errc::invalid_argument for a bad name, or (in a cluster) a channel or latch that would
// not share the key's slot.
synchronizer_names synchronizer_names_of(client_core& core, const std::string& name,
                                         std::string (*channel)(std::string_view key),
                                         const char* what);

// Permits are Java ints in Redisson: counts past that could not be shared with it.
inline constexpr std::int64_t max_permits = 2'147'483'647;
// Throws errc::invalid_argument unless min <= n <= max_permits (and n >= -max_permits).
void check_permits(std::int64_t n, std::int64_t min, const char* what);

// The waiting loop's request for a synchronizer's try of `grant` on `key`, its waiters listening
// on `channel`: `wait` empty waits for ever, zero tries once. `hold`: the grant is a hold (a
// permit), whose owner the caller sets.
waiting::acquire_request synchronizer_acquire_request(const std::string& key,
                                                      const std::string& channel,
                                                      std::optional<std::chrono::milliseconds> wait,
                                                      std::stop_token stop,
                                                      const waiting::grant_kind& grant,
                                                      const waiting::hold_kind* hold = nullptr);

// A semaphore's administration (semaphore_admin.lua): `op` with `n`. A permit-expirable one
// passes its expiry set `timeouts` (the script takes expired permits back first), and the
// permit's id (16 bytes) for "lease".
std::int64_t semaphore_admin(client_core& core, const std::string& key, const std::string& channel,
                             const char* op, std::int64_t n, const std::string& what,
                             const std::string& timeouts = {}, std::string raw_id = {});

}  // namespace relock::detail::synchronizers
