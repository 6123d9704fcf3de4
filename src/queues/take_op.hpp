// SPDX-License-Identifier: Apache-2.0
// A blocking take from a list (blocking_queue::take, poll with a wait): BLPOP on a connection of
// its own (exec::blocking_pool), driven by take_fsm.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include <relock/detail/completion.hpp>

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::queues {

struct take_request {
  std::string key;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // empty: for ever
  // When the caller asked: the observer's wait starts there. None: when the take starts.
  std::optional<std::chrono::steady_clock::time_point> asked_at;
  std::stop_token stop;
};

// (error, the element; nullopt when the wait ran out, the failure's words: the server's own
// text for an error reply). Any thread; the work and the callback happen on the I/O thread.
// errc::cancelled for a stop or the client's shutdown.
// The error, its words (the server's text), then the element (nullopt when the wait ran out).
using take_callback = answer<std::optional<std::string>>;

void start_take(std::shared_ptr<client_core> core, take_request request, take_callback done);

}  // namespace relock::detail::queues
