// SPDX-License-Identifier: Apache-2.0
// Pub/sub mode `both` (a fleet mid-upgrade between Redisson 3.18, classic, and 4.x, sharded, in
// one cluster): every channel is listened to both ways, and a listener hears what either brings.
// A release publishes both ways too (PUBLISH+SPUBLISH), so each waiter may be woken twice for
// one release: it only tries once more.
//
// I/O thread only.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "pubsub/subscriber.hpp"

namespace relock::pubsub {

class channel_pair final : public channels {
 public:
  channel_pair(channels& classic, channels& sharded) : classic_(classic), sharded_(sharded) {}

  // Confirmed once both ways answered; an error only when neither way could confirm.
  listener_ptr add(std::string channel, listener_function on_event,
                   confirm_callback confirmed) override;
  // The classic way only.
  listener_ptr add_classic(std::string channel, listener_function on_event,
                           confirm_callback confirmed) override;
  void remove(const listener_ptr& l) override;
  asio::io_context& io() override { return classic_.io(); }

 private:
  channels& classic_;
  channels& sharded_;
  std::unordered_map<const listener*, std::pair<listener_ptr, listener_ptr>> parts_;
  std::unordered_set<const listener*> classic_only_;
};

}  // namespace relock::pubsub
