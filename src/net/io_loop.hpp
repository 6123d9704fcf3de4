// SPDX-License-Identifier: Apache-2.0
// How the I/O thread runs its io_context: asleep in epoll between events, or, with busy_poll,
// polling for a while after each event before it sleeps, as long as replies are awaited.
//
// Why poll: a reply often arrives within tens of microseconds, and waking a thread that slept
// costs about as much on a virtual machine whose idle vCPU halts (bench/RESULTS.md measures
// 40 to 90 us per wake-up there). Polling trades client CPU for that latency; it yields the CPU
// between polls, so threads that share it still run.
#pragma once

#include <chrono>
#include <functional>

#include <asio/io_context.hpp>

namespace relock::net {

// Runs `io` until it is stopped or out of work. `busy_poll` zero: plain io.run(). Polls only
// while `awaiting_replies()` says a reply is due (called on the I/O thread): a client with
// nothing in flight sleeps at once.
void run_io_loop(asio::io_context& io, std::chrono::microseconds busy_poll,
                 const std::function<bool()>& awaiting_replies);

}  // namespace relock::net
