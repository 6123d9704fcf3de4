// How the I/O thread runs its io_context: asleep in epoll between events, or, with busy_poll,
// polling for a while after each event before it sleeps.
//
// Why poll: a reply often arrives within tens of microseconds, and waking a thread that slept
// costs about as much on a virtual machine whose idle vCPU halts (bench/RESULTS.md measures
// 40 to 90 us per wake-up there). Polling trades client CPU for that latency; it yields the CPU
// between polls, so threads that share it still run.
#pragma once

#include <chrono>

#include <asio/io_context.hpp>

namespace relock::net {

// Runs `io` until it is stopped or out of work. `busy_poll` zero: plain io.run().
void run_io_loop(asio::io_context& io, std::chrono::microseconds busy_poll);

}  // namespace relock::net
