// SPDX-License-Identifier: Apache-2.0
// A client's transfer for one delayed queue (data-layout §9): runs the transfer script when
// transfer_schedule says, listening on the queue's channel for earlier elements. One per client
// and destination, shared by the client's delayed_queue handles on it: it runs while any of them
// lives (or until destroy()), and stops with the client.
#pragma once

#include <memory>
#include <string>

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::queues {

// Keeps the transfer of `destination_key` running while held; its end stops the transfer
// unless another handle of the same client holds it too. Any thread.
std::shared_ptr<void> hold_transfer(const std::shared_ptr<client_core>& core,
                                    const std::string& destination_key);
// Stops the client's transfer of `destination_key` now, whoever holds it (delayed_queue::destroy).
void stop_transfer(const std::shared_ptr<client_core>& core, const std::string& destination_key);

}  // namespace relock::detail::queues
