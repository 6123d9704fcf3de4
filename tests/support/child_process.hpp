// SPDX-License-Identifier: Apache-2.0
// Test code run in a child process (fork), for tests that need another process: a second
// relock client with its own id and threads, one that can be SIGKILLed. Fork before the test
// process starts threads of its own (a relock::client has one), so children start clean.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <vector>

#include "process/reap.hpp"

namespace relock::test {

// Runs `body` in a new process, which exits with body's status (1 if it threw) without running
// the parent's destructors (which would stop the test's servers). Returns the child's pid.
template <class Body>
pid_t fork_child(Body body) {
  const pid_t pid = fork();
  if (pid != 0) return pid;  // the parent (or -1: callers check)
  int status = 1;
  try {
    status = body();
  } catch (...) {
    status = 1;
  }
  _exit(status);
}

// Reaps each child and fails the test for one that did not exit with status 0.
inline void expect_children_succeed(const std::vector<pid_t>& children) {
  for (pid_t pid : children) {
    const std::optional<int> status = process::reap(pid);
    ASSERT_TRUE(status) << "pid " << pid << " is no child of this process";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "child " << pid << " " << process::describe(*status);
  }
}

}  // namespace relock::test
