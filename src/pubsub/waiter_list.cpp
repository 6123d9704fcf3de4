// SPDX-License-Identifier: Apache-2.0
#include "pubsub/waiter_list.hpp"

namespace relock::pubsub {

void waiter_list::push(waiter& w) {
  w.signalled = false;
  w.next_ = nullptr;
  w.prev_ = tail_;
  (tail_ ? tail_->next_ : head_) = &w;
  tail_ = &w;
}

void waiter_list::remove(waiter& w, bool used_wake) {
  (w.prev_ ? w.prev_->next_ : head_) = w.next_;
  (w.next_ ? w.next_->prev_ : tail_) = w.prev_;
  w.prev_ = w.next_ = nullptr;
  if (w.signalled && !used_wake) wake(w.demand);
  w.signalled = false;
}

void waiter_list::wake(std::size_t n) {
  const bool all = n == wake_all;
  std::size_t left = n;
  bool passed_over = false;  // a waiter wanted more than was left
  for (waiter* w = head_; w != nullptr && (all || left > 0);) {
    waiter* next = w->next_;  // wake() does not unlink, but stay safe if it ever does
    if (all || !w->signalled) {
      if (all || w->demand <= left) {
        w->signalled = true;
        if (!all) left -= w->demand;
        w->wake();
      } else {
        passed_over = true;
      }
    }
    w = next;
  }
  // A waiter about to sleep would miss these wakes: keep them for the next ones. Not when a
  // waiter already here could not have them: a waiter arriving later must not pass it.
  if (!all && !passed_over) permits_ += left;
}

bool waiter_list::take_permit() {
  if (permits_ == 0) return false;
  --permits_;
  return true;
}

}  // namespace relock::pubsub
