// SPDX-License-Identifier: Apache-2.0
// relock's command line, parsed: which subcommand, and its options.
#pragma once

#include <optional>
#include <string>

#include "cli.hpp"

namespace relock_cli {

struct command_line {
  // run, status, queue, semaphore, unlock, doctor, top, demo, demo-worker
  std::string subcommand;
  global_options global;
  run_options run;
  queue_options queue;
  semaphore_admin_options semaphore;
  demo_options demo;
  doctor_options doctor;
  top_options top;
  std::string name;  // status, unlock
  bool force = false;
};

// Fills `c`, or returns the code to exit with when parsing is all there is to do: help and
// --version (printed, 0), or a usage error (one line on stderr, 2).
std::optional<int> parse_command_line(int argc, char** argv, command_line& c);

}  // namespace relock_cli
