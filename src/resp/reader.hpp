// SPDX-License-Identifier: Apache-2.0
// Push parser for RESP2: feed bytes as they arrive, pull whole replies out.
// Wraps hiredis's reader with callbacks that build relock::resp::reply directly.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>

#include "resp/reply.hpp"

struct redisReader;

namespace relock::resp {

struct protocol_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class reader {
 public:
  reader();
  ~reader();
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;

  void feed(const char* data, std::size_t size);

  // The next complete reply, or nullopt when more bytes are needed. Throws protocol_error on
  // malformed input; the reader is unusable afterwards (the connection must be dropped).
  std::optional<reply> next();

 private:
  redisReader* impl_;
  reply root_;  // the reply being read (reader.cpp's place)
};

}  // namespace relock::resp
