// SPDX-License-Identifier: Apache-2.0
// Deletes keys that have done their work (unlock latches), many per DEL.
//
// A release's latch must go once the release has completed (data-layout §1.8), but a DEL of its
// own per release is one more command for the server to read and answer and one more write and
// reply for the client: a third of the commands of a lock/unlock pair. Keys handed over wait up
// to `delay` for others, then leave together, one DEL per `batch` keys, after the handlers of
// that pass (waking a waiter comes first); a full batch leaves at once. A latch lingering that
// long changes nothing: a late copy of its release still finds it, and it expires by its TTL
// should the DEL never come.
//
// I/O thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <asio/steady_timer.hpp>

#include "exec/executor.hpp"

namespace relock::exec {

class key_sweeper {
 public:
  // `group_by_slot`: a Cluster's DEL takes keys of one slot only; a single server takes any.
  // `delay` zero: keys leave after the pass that handed them over.
  key_sweeper(executor& ex, std::size_t batch, bool group_by_slot, std::chrono::milliseconds delay);
  key_sweeper(const key_sweeper&) = delete;
  key_sweeper& operator=(const key_sweeper&) = delete;

  void discard(std::string key);

  // The client is closing: what waits leaves now, and later keys after their pass, so that the
  // shutdown's drain sees their DELs through.
  void hurry();

 private:
  void plan_sweep();
  void sweep();
  void send(std::span<const std::string> keys);

  executor& executor_;
  std::size_t batch_;
  bool group_by_slot_;
  std::chrono::milliseconds delay_;
  asio::steady_timer timer_;
  std::vector<std::string> doomed_;    // handed over since the last sweep
  std::vector<std::string> sweeping_;  // the sweep under way
  bool sweep_planned_ = false;         // posted to run after this pass
  bool timer_armed_ = false;
};

}  // namespace relock::exec
