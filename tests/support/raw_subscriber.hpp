// SPDX-License-Identifier: Apache-2.0
// A blocking hiredis subscriber that plays a foreign client listening on a channel, sharing no
// code with the library under test.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct redisContext;

namespace relock::test {

class redis_server;

class raw_subscriber {
 public:
  // Subscribes (SUBSCRIBE, or SSUBSCRIBE when `sharded`) and returns once confirmed.
  raw_subscriber(const redis_server& server, const std::string& channel, bool sharded = false);
  ~raw_subscriber();
  raw_subscriber(const raw_subscriber&) = delete;
  raw_subscriber& operator=(const raw_subscriber&) = delete;

  // The next message's payload, or nullopt when none came within `timeout`.
  std::optional<std::string> next(std::chrono::milliseconds timeout);

 private:
  struct context_deleter {
    void operator()(redisContext* c) const;
  };
  std::unique_ptr<redisContext, context_deleter> context_;
};

}  // namespace relock::test
