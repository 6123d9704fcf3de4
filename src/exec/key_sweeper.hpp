// SPDX-License-Identifier: Apache-2.0
// Deletes keys that have done their work (unlock latches), many per DEL.
//
// A release's latch must go once the release has completed (data-layout §1), but a DEL of its own
// per release is one more command for the server to read and answer: a third of the commands of
// a lock/unlock pair. Keys handed over during one pass of the I/O loop leave together, in one
// DEL per `batch` keys, after the handlers of that pass (waking a waiter comes first).
//
// I/O thread only.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "exec/executor.hpp"

namespace relock::exec {

class key_sweeper {
 public:
  // `group_by_slot`: a Cluster's DEL takes keys of one slot only; a single server takes any.
  key_sweeper(executor& ex, std::size_t batch, bool group_by_slot);
  key_sweeper(const key_sweeper&) = delete;
  key_sweeper& operator=(const key_sweeper&) = delete;

  void discard(std::string key);

 private:
  void sweep();
  void send(std::span<const std::string> keys);

  executor& executor_;
  std::size_t batch_;
  bool group_by_slot_;
  std::vector<std::string> doomed_;    // handed over since the last pass
  std::vector<std::string> sweeping_;  // the pass under way
  bool sweep_planned_ = false;
};

}  // namespace relock::exec
