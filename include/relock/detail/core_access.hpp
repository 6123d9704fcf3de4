// SPDX-License-Identifier: Apache-2.0
// The client's core as the public headers see it: an opaque class every handle shares
// (src/client_core.hpp), and the one thing their templates ask of it, the I/O context their
// completion handlers default to.
#pragma once

#include <asio/io_context.hpp>
#include <relock/detail/export.hpp>

namespace relock::detail {

class client_core;
RELOCK_API asio::io_context& io_of(client_core& core);

}  // namespace relock::detail
