// SPDX-License-Identifier: Apache-2.0
#include "process/reap.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <thread>

namespace relock::process {
namespace {

using namespace std::chrono_literals;

// A process that acts on SIGTERM in a timer (Redis does, every 1/hz = 100 ms) is gone a few
// polls later; a short poll keeps the stop of a test's server quick.
constexpr auto stop_poll = 5ms;

bool wait_gone(const std::function<bool()>& gone, std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    if (gone()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(stop_poll);
  }
}

}  // namespace

std::optional<int> reap(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return std::nullopt;
  return status;
}

std::string describe(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "gone";
}

stop_result stop(pid_t pid, std::chrono::milliseconds grace, const std::function<bool()>& gone) {
  if (gone()) return stop_result::terminated;
  ::kill(pid, SIGTERM);
  if (wait_gone(gone, grace)) return stop_result::terminated;
  ::kill(pid, SIGKILL);
  return wait_gone(gone, grace) ? stop_result::killed : stop_result::survived;
}

}  // namespace relock::process
