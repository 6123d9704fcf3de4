// SPDX-License-Identifier: Apache-2.0
#include "bridge.hpp"

#include <thread>

namespace relock::python {

std::atomic<int>& threads_outside_gil() {
  static std::atomic<int> count{0};
  return count;
}

bool wait_for_threads_back(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  // Not a released_gil: the caller is the one thread that is not waited for.
  py::gil_scoped_release unlocked;
  while (threads_outside_gil().load() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace relock::python
