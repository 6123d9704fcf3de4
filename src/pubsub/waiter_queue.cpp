// SPDX-License-Identifier: Apache-2.0
#include "pubsub/waiter_queue.hpp"

#include <asio/post.hpp>
#include <relock/errors.hpp>

namespace relock::pubsub {

void waiter_queues::join(const std::string& channel, wake_count wakes, waiter& w,
                         ready_callback ready, std::chrono::milliseconds linger) {
  auto& slot = queues_[channel];
  if (!slot) {
    slot = std::make_shared<queue>();
    slot->channel = channel;
    slot->wakes = wakes;
    slot->linger = linger;
  }
  queue& q = *slot;
  if (q.waiters.empty()) q.waiters.clear_permits();
  w.channel_ = channel;
  q.waiters.push(w);

  if (q.confirmed || q.unconfirmed) {
    const std::error_code ec = q.confirmed ? std::error_code() : make_error_code(errc::timeout);
    asio::post(subscriber_.io(), [ready = std::move(ready), ec]() mutable { ready(ec); });
    return;
  }
  q.not_ready.emplace_back(&w, std::move(ready));
  if (!q.listener) subscribe(slot);
}

void waiter_queues::subscribe(const std::shared_ptr<queue>& q) {
  std::weak_ptr<queue> weak = q;
  q->listener = subscriber_.add(
      q->channel,
      [this, weak](const event& e) {
        if (auto alive = weak.lock()) on_event(*alive, e);
      },
      [this, weak](std::error_code ec) {
        auto alive = weak.lock();
        if (!alive) return;
        // Unconfirmed: these waiters go on without messages, bounded by the holder's TTL, and
        // the listener stays, so the subscriber renews the channel once Redis is back.
        (ec ? alive->unconfirmed : alive->confirmed) = true;
        auto ready = std::move(alive->not_ready);
        alive->not_ready.clear();
        for (auto& [who, callback] : ready) callback(ec);
      });
}

void waiter_queues::leave(waiter& w, bool used_wake) {
  auto it = queues_.find(w.channel_);
  if (it == queues_.end()) return;
  queue& q = *it->second;
  q.waiters.remove(w, used_wake);
  std::erase_if(q.not_ready, [&](const auto& entry) { return entry.first == &w; });
  if (q.waiters.empty()) linger_or_drop(it);
}

void waiter_queues::linger_or_drop(queue_map::iterator it) {
  queue& q = *it->second;
  if (q.linger.count() <= 0 || !q.confirmed) return drop(it);
  if (!q.idle) q.idle = std::make_unique<asio::steady_timer>(subscriber_.io());
  q.idle->expires_after(q.linger);
  std::weak_ptr<queue> weak = it->second;
  q.idle->async_wait([this, weak](std::error_code ec) {
    auto alive = weak.lock();
    if (ec || !alive || !alive->waiters.empty()) return;  // replaced, or waited on again
    auto found = queues_.find(alive->channel);
    if (found != queues_.end() && found->second == alive) drop(found);
  });
}

void waiter_queues::drop(queue_map::iterator it) {
  // Nobody waits: release the channel, so waiting on many names leaves nothing.
  if (it->second->listener) subscriber_.remove(it->second->listener);
  queues_.erase(it);
}

bool waiter_queues::take_permit(const waiter& w) {
  auto it = queues_.find(w.channel_);
  return it != queues_.end() && it->second->waiters.take_permit();
}

void waiter_queues::wake_everyone() {
  // Copied: a woken waiter may leave its queue, and the last one out erases it.
  std::vector<std::shared_ptr<queue>> all;
  for (auto& [channel, q] : queues_) all.push_back(q);
  for (auto& q : all) q->waiters.wake(wake_all);
}

void waiter_queues::on_event(queue& q, const event& e) {
  if (e.kind == event_kind::resubscribed) {
    q.confirmed = true;
    q.unconfirmed = false;
  }
  q.waiters.wake(e.kind == event_kind::message ? q.wakes(e.payload) : wake_all);
}

}  // namespace relock::pubsub
