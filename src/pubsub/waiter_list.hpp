// SPDX-License-Identifier: Apache-2.0
// One channel's waiting acquires, in arrival order, and what a message does to them: no I/O and
// no clock, so the wake rules are unit-tested without a server (waiter_queue.hpp adds the
// subscription around it).
//
// A message carries a budget `n` (the kind's reading of the payload: 1 for "0", every waiter for
// "1", a semaphore's permit count) and wakes, in order, the waiters not already woken whose demand
// fits in what is left of it: a lock's waiter asks for 1, a semaphore's for the permits it wants,
// so a count of 2 does not wake a waiter for 3 but does wake one for 1 behind it. What nobody was
// there to take is kept as permits for the next waiters about to sleep, so a release that lands
// between a refused try and the sleep is not lost. A woken waiter that leaves without having used
// its wake (it gave up, or was cancelled) passes its demand on.
//
// Not thread-safe: the I/O thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace relock::pubsub {

// How many waiters a message wakes, as a kind reads its payload.
using wake_count = std::size_t (*)(std::string_view payload);
inline constexpr std::size_t wake_all = std::numeric_limits<std::size_t>::max();

// One waiting acquire. Its list links it in; the waiter itself stays where its owner put it.
struct waiter {
  std::function<void()> wake;  // called when a message is meant for it
  bool signalled = false;      // woken, and has not yet tried again
  std::size_t demand = 1;      // what it needs of a message's budget (a semaphore's permits)

 private:
  friend class waiter_list;
  friend class waiter_queues;
  waiter* prev_ = nullptr;
  waiter* next_ = nullptr;
  std::string channel_;  // the queue it is in (waiter_queues)
};

class waiter_list {
 public:
  void push(waiter& w);
  // Unlinks `w`; a wake it did not use goes to the next one.
  void remove(waiter& w, bool used_wake);
  // Wakes, in order, waiters not yet woken whose demand fits in what is left of `n`; when no
  // waiter was passed over, the rest of `n` becomes permits. wake_all wakes every waiter (woken
  // or not: something changed for all) and keeps no permit.
  void wake(std::size_t n);
  // True (and consumes it) when a wake came while nobody was waiting to hear it.
  bool take_permit();

  // Drops the permits: a waiter joining an idle list tries before it sleeps, so what came
  // while nobody waited has nothing to tell it.
  void clear_permits() { permits_ = 0; }

  bool empty() const { return head_ == nullptr; }
  std::size_t permits() const { return permits_; }

 private:
  waiter* head_ = nullptr;
  waiter* tail_ = nullptr;
  std::size_t permits_ = 0;
};

}  // namespace relock::pubsub
