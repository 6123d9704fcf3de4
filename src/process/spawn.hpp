// SPDX-License-Identifier: Apache-2.0
// Starting one program as a child process that dies with its parent: fork + exec, with the
// parent-death signal set, and exec's failure reported to the caller instead of lost in the
// child. Shared by the relock CLI (`demo`'s private Redis, `run`'s command) and tests/support;
// internal, never part of librelock.so.
//
// The parent-death signal (PR_SET_PDEATHSIG) is SIGKILL and is tied to the thread that called
// spawn(), not to the process: the child also dies when that thread exits. Spawn from a thread
// that outlives the child (the main thread, or the one that waits for it).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace relock::process {

struct spawn_options {
  // Where stdout and stderr go, appended (created 0644 if missing), with stdin reading
  // /dev/null; what a program prints before it opens its own log is kept there. Empty: the
  // child shares our stdin, stdout and stderr.
  std::filesystem::path output{};
  // The child's environment, "NAME=value" each; unset: ours.
  std::optional<std::vector<std::string>> env{};
  // The child's signal mask; unset: nothing blocked. A mask is inherited across exec, and a
  // server started with SIGTERM blocked would ignore being stopped.
  std::optional<sigset_t> signal_mask{};
  // Descriptors above 2 that the child keeps open (what our own caller handed us for it);
  // every other one is closed on exec, so the child holds none of our sockets (Asio and hiredis
  // open them without close-on-exec) and closing one here really disconnects it.
  std::vector<int> keep_fds{};
  // Look argv[0] up on $PATH as a shell would (execvpe: a name without a slash is searched, a
  // file without #! runs under /bin/sh). Otherwise argv[0] is the path run.
  bool search_path = false;
};

// exec failed in the child: code() is exec's errno (ENOENT: no such program). The child has
// been reaped.
struct exec_error : std::system_error {
  exec_error(int error, const std::string& program)
      : std::system_error(error, std::generic_category(), "exec " + program) {}
};

// Starts argv[0] with `argv` and returns the child's PID, once exec has succeeded; the caller
// owns the child and reaps it (reap.hpp, or process::child, which does both). Throws
// exec_error when exec failed, std::system_error when a preparation (opening `output`, the
// pipe) or fork failed, and std::invalid_argument for an empty argv.
pid_t spawn(const std::vector<std::string>& argv, const spawn_options& options = {});

// The absolute path of `program` in the first directory of $PATH that holds an executable of
// that name; none when no directory does or PATH is unset. For asking before starting whether
// a program is installed, and for running it by path afterwards.
std::optional<std::filesystem::path> find_on_path(std::string_view program);

}  // namespace relock::process
