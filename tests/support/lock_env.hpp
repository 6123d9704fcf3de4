// SPDX-License-Identifier: Apache-2.0
// A server, a client on it, and a raw client beside it: what most lock tests start from.
#pragma once

#include <future>
#include <thread>

#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "support/client_settings.hpp"
#include "support/error_of.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

namespace relock::test {

// The owner field relock writes for the calling thread.
inline std::string my_field(const relock::client& c) {
  return c.id() + ":" + std::to_string(relock::owner::current_thread().id());
}

// True once some client (a waiter) is subscribed to `channel` on the server.
inline bool subscribed(raw_client& raw, const std::string& channel) {
  return raw.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= 1;
}

// Runs `f` on a new thread (a different owner) and waits for it.
template <class F>
auto on_other_thread(F f) {
  return std::async(std::launch::async, std::move(f)).get();
}

}  // namespace relock::test
