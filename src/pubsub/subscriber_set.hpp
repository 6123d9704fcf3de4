// SPDX-License-Identifier: Apache-2.0
// Sharded pub/sub in a Redis Cluster: a subscriber (and its connection) per node, each channel
// subscribed (SSUBSCRIBE) on the master that owns its slot, one slot per command.
//
// When a slot moves or its node stops serving it, the server ends the channel's subscription
// with an unsolicited `sunsubscribe`, and an SSUBSCRIBE sent to the old owner answers MOVED: the
// channel's listeners move to the new owner, and once it confirms they hear `resubscribed` (the
// waiters wake once and try again), so no wake-up is lost in between. Several Redis clients
// shipped bugs here (messages silently stop after a slot migration). A classic listener
// (add_classic) joins the subscriber of its channel's slot too, with SUBSCRIBE: a classic
// message reaches every node, so it never has to move.
//
// I/O thread only.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pubsub/subscriber.hpp"
#include "topology/slot_map.hpp"

namespace relock::pubsub {

class subscriber_set final : public channels {
 public:
  // The node that serves a channel's slot now (none: the map has no master for it).
  using locate = std::function<std::optional<topology::node>(std::string_view channel)>;
  // A MOVED taught where a slot lives now.
  using learn = std::function<void(std::uint16_t slot, const topology::node&)>;
  // A started sharded subscriber for a node.
  using make = std::function<std::shared_ptr<subscriber>(const topology::node&)>;

  subscriber_set(asio::io_context& io, locate where, learn moved, make create);

  listener_ptr add(std::string channel, listener_function on_event,
                   confirm_callback confirmed) override;
  listener_ptr add_classic(std::string channel, listener_function on_event,
                           confirm_callback confirmed) override;
  void remove(const listener_ptr& l) override;
  asio::io_context& io() override { return io_; }
  void close();

  std::size_t nodes() const { return subscribers_.size(); }

 private:
  subscriber& on(const topology::node& n);
  subscriber& home_for(std::string_view channel);
  listener_ptr join(listener_ptr l, confirm_callback confirmed);
  void moved(moved_channel m, const topology::node& from);

  asio::io_context& io_;
  locate where_;
  learn learn_;
  make create_;
  std::vector<std::pair<topology::node, std::shared_ptr<subscriber>>> subscribers_;
  std::unordered_map<const listener*, subscriber*> home_;
};

}  // namespace relock::pubsub
