// SPDX-License-Identifier: Apache-2.0
#include "exec/key_sweeper.hpp"

#include <map>

#include <asio/post.hpp>

#include "topology/slot.hpp"

namespace relock::exec {

key_sweeper::key_sweeper(executor& ex, std::size_t batch, bool group_by_slot,
                         std::chrono::milliseconds delay)
    : executor_(ex),
      batch_(batch == 0 ? 1 : batch),
      group_by_slot_(group_by_slot),
      delay_(delay),
      timer_(ex.io()) {}

void key_sweeper::discard(std::string key) {
  doomed_.push_back(std::move(key));
  if (delay_.count() <= 0 || doomed_.size() >= batch_) {
    plan_sweep();
    return;
  }
  if (timer_armed_) return;
  timer_armed_ = true;
  timer_.expires_after(delay_);
  timer_.async_wait([this](std::error_code ec) {
    if (ec == asio::error::operation_aborted) return;  // swept sooner, or closing
    timer_armed_ = false;
    plan_sweep();
  });
}

void key_sweeper::hurry() {
  delay_ = std::chrono::milliseconds(0);
  // Now, not posted: the drain that follows counts the DELs only once they are sent.
  if (!doomed_.empty()) sweep();
}

void key_sweeper::plan_sweep() {
  if (sweep_planned_) return;
  sweep_planned_ = true;
  // Posted, so it runs after the handlers already due in this pass.
  asio::post(executor_.io(), [this] { sweep(); });
}

void key_sweeper::sweep() {
  sweep_planned_ = false;
  if (timer_armed_) {
    timer_armed_ = false;
    timer_.cancel();
  }
  // Swapped, not moved: both vectors keep their capacity for the next sweeps.
  std::swap(doomed_, sweeping_);
  if (!group_by_slot_) {
    send(sweeping_);
  } else {
    std::map<std::uint16_t, std::vector<std::string>> by_slot;
    for (auto& k : sweeping_) {
      const auto slot = topology::slot_of(k);
      by_slot[slot].push_back(std::move(k));
    }
    for (auto& [slot, same_slot] : by_slot) send(same_slot);
  }
  sweeping_.clear();
}

void key_sweeper::send(std::span<const std::string> keys) {
  for (std::size_t from = 0; from < keys.size(); from += batch_) {
    const auto these = keys.subspan(from, std::min(batch_, keys.size() - from));
    resp::request del;
    del.push({"DEL"}, these, {});
    // Nobody waits for the answer: a latch left behind expires on its own (its TTL).
    executor_.run(these.front(), std::move(del), [](std::error_code, resp::reply) {});
  }
}

}  // namespace relock::exec
