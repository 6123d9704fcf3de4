// SPDX-License-Identifier: Apache-2.0
// client::inspect: reads what a name holds, in one script (a consistent snapshot), and
// recognises the lock kind from the data (docs/data-layout.md).
#pragma once

#include <memory>
#include <string>
#include <system_error>

#include <relock/detail/completion.hpp>
#include <relock/lock_info.hpp>

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::layout {

using inspect_callback = detail::answer<lock_info>;

// Any thread; the read and the callback happen on the I/O thread. A bad name completes with
// errc::invalid_argument, a stopped client with errc::cancelled.
void start_inspect(std::shared_ptr<detail::client_core> core, std::string name,
                   inspect_callback done);

}  // namespace relock::layout
