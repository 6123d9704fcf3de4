// SPDX-License-Identifier: Apache-2.0
// The client's own acquire_env: each need of one acquire, met by client_core's parts (the
// executor, the waiter queues, the watchdog, the sweeper, the take-back book).
#pragma once

#include <memory>

#include "waiting/acquire_env.hpp"

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::waiting {

// I/O thread (the timer it owns is the I/O thread's).
std::shared_ptr<acquire_env> make_core_acquire_env(std::shared_ptr<client_core> core);

}  // namespace relock::detail::waiting
