// SPDX-License-Identifier: Apache-2.0
// Where a blocking call's caller waits for the results its operation's completion hands over
// from the I/O thread: one slot on the caller's stack, filled once. It replaces a
// std::promise/std::future pair, whose shared state and result cost two heap allocations on
// every blocking call (four per lock/unlock pair, issue #36).
//
// The wait is std::atomic::wait: libstdc++ spins briefly (a dozen pauses, then a few
// yields) before it sleeps on a futex, so a reply that is already on its way is picked up
// without the cost of a sleep and a wake-up.
#pragma once

#include <atomic>
#include <optional>
#include <tuple>
#include <utility>

namespace relock::detail::waiting {

template <class... Results>
class result_slot {
 public:
  result_slot() = default;
  result_slot(const result_slot&) = delete;
  result_slot& operator=(const result_slot&) = delete;

  // Once, from any thread. The caller may return (and this slot go) as soon as it sees the
  // flag set: nothing here touches the slot after that store but the futex wake-up, which
  // only names its address (the kernel reads nothing there).
  void fill(Results... results) {
    value_.emplace(std::move(results)...);
    // seq_cst, not release: notify_one() then reads whether anybody sleeps, and that read must
    // not pass this store, or a caller that went to sleep in between would never wake.
    filled_.store(1, std::memory_order_seq_cst);
    filled_.notify_one();
  }

  // Waits until fill() ran, then hands the results over.
  std::tuple<Results...> take() {
    filled_.wait(0, std::memory_order_acquire);
    return std::move(*value_);
  }

 private:
  std::optional<std::tuple<Results...>> value_;
  std::atomic<int> filled_{0};  // an int: libstdc++ waits on its own address by futex
};

}  // namespace relock::detail::waiting
