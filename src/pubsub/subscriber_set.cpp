// SPDX-License-Identifier: Apache-2.0
#include "pubsub/subscriber_set.hpp"

#include <stdexcept>

#include <asio/post.hpp>

namespace relock::pubsub {

subscriber_set::subscriber_set(asio::io_context& io, locate where, learn moved, make create)
    : io_(io), where_(std::move(where)), learn_(std::move(moved)), create_(std::move(create)) {}

subscriber& subscriber_set::on(const topology::node& n) {
  for (auto& [node, s] : subscribers_) {
    if (node == n) return *s;
  }
  auto s = create_(n);
  s->on_moved([this, n](moved_channel m) { moved(std::move(m), n); });
  subscribers_.emplace_back(n, std::move(s));
  return *subscribers_.back().second;
}

subscriber& subscriber_set::home_for(std::string_view channel) {
  if (auto n = where_(channel)) return on(*n);
  // No master for the slot (a failover under way): any node; its MOVED will correct it.
  if (!subscribers_.empty()) return *subscribers_.front().second;
  throw std::logic_error("subscriber_set: no node to subscribe on");
}

listener_ptr subscriber_set::add(std::string channel, listener_function on_event,
                                 confirm_callback confirmed) {
  return join(std::make_shared<listener>(listener{std::move(channel), std::move(on_event), false}),
              std::move(confirmed));
}

listener_ptr subscriber_set::add_classic(std::string channel, listener_function on_event,
                                         confirm_callback confirmed) {
  return join(std::make_shared<listener>(listener{std::move(channel), std::move(on_event), true}),
              std::move(confirmed));
}

listener_ptr subscriber_set::join(listener_ptr l, confirm_callback confirmed) {
  subscriber& s = home_for(l->channel);
  s.add(l, std::move(confirmed));
  home_[l.get()] = &s;
  return l;
}

void subscriber_set::remove(const listener_ptr& l) {
  if (!l) return;
  auto it = home_.find(l.get());
  if (it == home_.end()) return;
  it->second->remove(l);
  home_.erase(it);
}

void subscriber_set::moved(moved_channel m, const topology::node& from) {
  if (m.moved_to) {
    topology::node to{
        m.moved_to->host.empty() || m.moved_to->host == "?" ? from.host : m.moved_to->host,
        m.moved_to->port};
    learn_(m.moved_to->slot, to);
  }
  // Posted: the old subscriber is in the middle of handling its push.
  asio::post(io_, [this, m = std::move(m)]() mutable {
    for (auto& [l, due] : m.listeners) {
      if (!home_.contains(l.get())) continue;  // removed meanwhile
      subscriber& s = home_for(m.channel);
      home_[l.get()] = &s;
      if (due) {
        s.add(l, std::move(due));
      } else {
        // It was confirmed before: once confirmed on the new owner, its waiters try again.
        s.add(l, [weak = std::weak_ptr<listener>(l)](std::error_code ec) {
          auto alive = weak.lock();
          if (!ec && alive) alive->on_event(event{event_kind::resubscribed, alive->channel, {}});
        });
      }
    }
  });
}

void subscriber_set::close() {
  for (auto& [node, s] : subscribers_) s->close();
}

}  // namespace relock::pubsub
