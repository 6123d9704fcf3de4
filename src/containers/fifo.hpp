// SPDX-License-Identifier: Apache-2.0
// A first-in first-out queue over one vector that keeps its capacity: what std::deque gives,
// without a block allocated and freed every few elements as a queue fills and drains (a
// connection's requests do that twice per request; tests/allocations counts it).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace relock::containers {

template <class T>
class fifo {
 public:
  using iterator = typename std::vector<T>::iterator;

  fifo() = default;
  fifo(fifo&& other) noexcept
      : items_(std::move(other.items_)), head_(std::exchange(other.head_, 0)) {
    other.items_.clear();
  }
  fifo& operator=(fifo&& other) noexcept {
    items_ = std::move(other.items_);
    head_ = std::exchange(other.head_, 0);
    other.items_.clear();
    return *this;
  }
  fifo(const fifo&) = delete;
  fifo& operator=(const fifo&) = delete;

  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }

  void push_back(T item) { items_.push_back(std::move(item)); }
  void push_front(T item) {
    if (head_ > 0) {
      items_[--head_] = std::move(item);
    } else {
      items_.insert(items_.begin(), std::move(item));
    }
  }
  // The element stays in place, as it is, until the queue drains: move it out first.
  void pop_front() {
    ++head_;
    if (head_ == items_.size()) {
      clear();
    } else if (head_ >= compact_after && head_ * 2 >= items_.size()) {
      // Never drained (a queue under steady load): move the live half down, in place.
      items_.erase(items_.begin(), begin());
      head_ = 0;
    }
  }
  iterator erase(iterator it) { return items_.erase(it); }
  void clear() {
    items_.clear();
    head_ = 0;
  }

 private:
  static constexpr std::size_t compact_after = 32;
  std::vector<T> items_;  // [0, head_) are taken already, moved from
  std::size_t head_ = 0;
};

}  // namespace relock::containers
