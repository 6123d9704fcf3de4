// SPDX-License-Identifier: Apache-2.0
// A release whose answer never came (Redis stopped answering, the connection was lost after
// the write) may not have run: the lock would stay held until its lease ran out, and a waiter
// elsewhere would wait that long. So it is booked (take_back_book, by key and owner) and sent
// again, under its latch, a pause after each copy's failure, until a copy is answered or
// `until` passes (the lease's end, within the latch's window); an owner's next try
// on the key settles it first, whatever happened here. The caller has heard of the failure
// already: this only finishes what it asked for. When the client shuts down, one last copy goes
// out if none is, and the shutdown's drain lets it be answered while Redis answers.
//
// I/O thread only.
#pragma once

#include <chrono>
#include <memory>

#include "waiting/release_op.hpp"

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::waiting {

// `request.latch` is the failed release's latch.
void retry_release(const std::shared_ptr<client_core>& core, release_request request,
                   std::chrono::steady_clock::time_point until);

}  // namespace relock::detail::waiting
