// SPDX-License-Identifier: Apache-2.0
// Ending and reaping processes by PID: a blocking reap, words for a wait status, and the stop
// every owner of a server does (SIGTERM, then SIGKILL after a grace period).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace relock::process {

// Waits for our child `pid` to end and reaps it (retrying on EINTR); returns its wait status,
// none when `pid` is no child of ours (reaped already, or SIGCHLD is ignored).
std::optional<int> reap(pid_t pid);

// "exited with status 1", "killed by signal 9", or "gone" for a status that is neither.
std::string describe(int wait_status);

enum class stop_result { terminated, killed, survived };

// SIGTERM to `pid`, then SIGKILL if `gone` has not returned true within `grace`; polls `gone`
// (which, for a child of ours, must reap it) and returns once it is true: terminated after
// SIGTERM alone, killed after SIGKILL, or survived when it is still not gone `grace` after the
// SIGKILL. Returns terminated at once when `gone` is true from the start.
stop_result stop(pid_t pid, std::chrono::milliseconds grace, const std::function<bool()>& gone);

}  // namespace relock::process
