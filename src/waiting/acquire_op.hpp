// SPDX-License-Identifier: Apache-2.0
// The waiting loop shared by every lock kind (data-layout §8): try; if refused, join the channel's
// waiter queue and wait for the subscription's confirmation; try again; then sleep until a
// message, the holder's TTL or the caller's deadline, whichever comes first; loop. acquire_fsm
// decides each step; the operation here only performs them, against an acquire_env.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include <relock/detail/acquire_result.hpp>
#include <relock/detail/completion.hpp>

#include "waiting/lock_kind.hpp"

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::waiting {

class acquire_env;

struct acquire_request {
  std::string key;
  std::string channel;         // where the kind's releases publish
  std::string waiter_channel;  // where this acquire waits for a wake, when not on `channel`
  std::string owner;           // "<client-id>:<owner-id>"
  std::string field;           // the hold's hash field for the owner
  std::chrono::milliseconds lease{0};
  bool watchdog = false;  // renew while held (no explicit lease)
  bool wait = false;      // false: one attempt only
  std::optional<std::chrono::steady_clock::time_point> deadline;  // with wait; none = for ever
  // When the caller asked, on its own thread: where the observer's wait starts, so that a wait
  // that ran out measures the whole of it. None: when the operation starts.
  std::optional<std::chrono::steady_clock::time_point> asked_at;
  std::stop_token stop;
  std::function<void(std::error_code)> on_lost;
  bool listen_for_loss = false;  // while held, check the hold on every message of `channel`
  const grant_kind* grant = nullptr;
  const hold_kind* hold = nullptr;  // the grant is the owner's hold; null: nobody's
  std::int64_t permits = 1;         // a semaphore's try takes this many; the waiter's demand

  const std::string& listens_on() const {
    return waiter_channel.empty() ? channel : waiter_channel;
  }
};

// Not acquired without an error: the wait ran out.
using acquire_callback = completion<void(std::error_code, acquire_result)>;

// Any thread; the work and the callback happen on the I/O thread.
void start_acquire(std::shared_ptr<client_core> core, acquire_request request,
                   acquire_callback done);

// The same against `env`, from its I/O thread (tests drive it with a fake one).
void run_acquire(std::shared_ptr<acquire_env> env, acquire_request request, acquire_callback done);

}  // namespace relock::detail::waiting
