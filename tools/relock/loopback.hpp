// SPDX-License-Identifier: Apache-2.0
// What the demo's private Redis needs of the loopback interface: free ports, and one question to
// a server on one over a plain socket. relock's client cannot ask it: it refuses a cluster node
// behind a redis:// URL, and a node must answer before it is part of any cluster.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

namespace relock_cli::loopback {

// Redis listens for its cluster bus on the client port + 10000 (the default cluster-port).
constexpr unsigned bus_offset = 10000;

// A port on 127.0.0.1 that nothing is bound to and that is not in `taken`; with `with_bus`, its
// bus port too (free, below 65536, not in `taken`). Throws failure when none is found.
std::uint16_t free_port(const std::set<unsigned>& taken, bool with_bus);

// Sends `command` inline ("INFO server") to 127.0.0.1:`port` and returns the reply as RESP
// text; empty when nothing answers within `timeout`.
std::string ask(std::uint16_t port, const std::string& command, std::chrono::milliseconds timeout);

}  // namespace relock_cli::loopback
