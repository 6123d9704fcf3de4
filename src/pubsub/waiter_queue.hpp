// SPDX-License-Identifier: Apache-2.0
// Process-wide queues of waiting acquires, one per channel, sharing one subscription
// (data-layout §8). A message wakes as many waiters as the kind reads from its payload
// (waiter_list.hpp: "0" one, "1" all); a resubscription after a reconnect (messages may have been
// lost) wakes them all. A channel may be kept subscribed for a while after its last waiter
// left (`linger`, an owner's own channel: a fair lock's waiter): the same owner waiting again
// soon finds it listening, and needs neither a new subscription nor a second try.
//
// I/O thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <asio/steady_timer.hpp>
#include <relock/detail/unique_function.hpp>

#include "pubsub/subscriber.hpp"
#include "pubsub/waiter_list.hpp"

namespace relock::pubsub {

class waiter_queues {
 public:
  using ready_callback = detail::unique_function<void(std::error_code)>;

  explicit waiter_queues(channels& s) : subscriber_(s) {}

  // Queues `w` on `channel`, whose messages `wakes` reads. `ready` runs (posted) once the
  // channel's subscription is confirmed, or with the error that kept it from being confirmed. An
  // unconfirmed subscription is kept: when the subscriber gets it back after a reconnect, every
  // waiter is woken to try again. `linger`: how long the channel stays subscribed once its last
  // waiter left (0: it goes at once), set by the join that subscribes it.
  void join(const std::string& channel, wake_count wakes, waiter& w, ready_callback ready,
            std::chrono::milliseconds linger = std::chrono::milliseconds(0));

  // Unlinks `w`. A waiter that was woken and leaves without having used the wake (it gave up,
  // or it was cancelled) passes the wake on, so a release is never swallowed.
  void leave(waiter& w, bool used_wake);

  // Wakes every waiter of every channel to try again: the master moved, and a release may have
  // happened where nobody of ours was listening.
  void wake_everyone();

  // True (and consumes it) when a message arrived while nobody was waiting to hear it.
  bool take_permit(const waiter& w);

  std::size_t queue_count() const { return queues_.size(); }
  // Whether anybody waits on `channel` now (woken or asleep).
  bool has_waiters(const std::string& channel) const {
    auto it = queues_.find(channel);
    return it != queues_.end() && !it->second->waiters.empty();
  }
  // Whether the server has confirmed `channel`, with waiters or lingering without (a join then
  // finds it ready at once; for tests: to know when waiters are asleep rather than trying).
  bool confirmed(const std::string& channel) const {
    auto it = queues_.find(channel);
    return it != queues_.end() && it->second->confirmed;
  }

 private:
  struct queue {
    std::string channel;
    wake_count wakes = nullptr;
    listener_ptr listener;
    waiter_list waiters;
    bool confirmed = false;
    // The subscription was not confirmed in time (Redis away): joiners go on without messages
    // until the subscriber gets the channel back and says so (resubscribed).
    bool unconfirmed = false;
    std::vector<std::pair<waiter*, ready_callback>> not_ready;
    std::chrono::milliseconds linger{0};
    std::unique_ptr<asio::steady_timer> idle;  // lingering: when the channel goes
  };

  void subscribe(const std::shared_ptr<queue>& q);
  using queue_map = std::unordered_map<std::string, std::shared_ptr<queue>>;

  void linger_or_drop(queue_map::iterator it);
  void drop(queue_map::iterator it);
  void on_event(queue& q, const event& e);

  channels& subscriber_;
  queue_map queues_;
};

}  // namespace relock::pubsub
