// SPDX-License-Identifier: Apache-2.0
// One or more commands encoded back to back, sent in one write, answered in order.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "resp/bulk_strings.hpp"
#include "resp/spare_payloads.hpp"

namespace relock::resp {

class request {
 public:
  request() = default;
  request(std::initializer_list<std::string_view> args) { push(args); }
  // An empty request that encodes into a spare buffer of this thread, when it has one
  // (resp::spare_payloads): for requests written soon after, whose buffers come back.
  static request reusing_spare() {
    request r;
    r.payload_ = spare_payloads::take();
    return r;
  }

  void push(std::initializer_list<std::string_view> args);
  void push(std::span<const std::string_view> args);
  void push(std::span<const std::string> args);
  // One command of three parts: EVALSHA sha numkeys, the keys, the arguments; DEL and keys.
  void push(std::initializer_list<std::string_view> head, const bulk_strings& more,
            const bulk_strings& last);
  void push(std::initializer_list<std::string_view> head, std::span<const std::string> more,
            std::span<const std::string> last);
  // Appends another request's commands after these.
  void append(const request& other) {
    payload_ += other.payload_;
    commands_ += other.commands_;
  }

  std::size_t commands() const { return commands_; }
  const std::string& payload() const { return payload_; }
  // The encoded bytes, moved out: what a connection queues without copying them.
  std::string take_payload() && { return std::move(payload_); }
  bool empty() const { return commands_ == 0; }

 private:
  std::string payload_;
  std::size_t commands_ = 0;
};

}  // namespace relock::resp
