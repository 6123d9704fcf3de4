// SPDX-License-Identifier: Apache-2.0
// relock: flock(1) for a fleet. Runs one subcommand and turns every error into one line on
// stderr and an exit code (listed in --help).
#include <iostream>

#include "cli.hpp"
#include "command_line.hpp"

using namespace relock_cli;

int main(int argc, char** argv) {
  command_line c;
  if (auto code = parse_command_line(argc, argv, c)) return *code;
  const auto& g = c.global;
  try {
    if (c.subcommand == "run") return run_command(g, c.run);
    if (c.subcommand == "status") return status_command(g, c.name);
    if (c.subcommand == "queue") return queue_command(g, c.queue);
    if (c.subcommand == "semaphore") return semaphore_command(g, c.semaphore);
    if (c.subcommand == "unlock") return unlock_command(g, c.name);
    if (c.subcommand == "doctor") return doctor_command(g, c.doctor);
    if (c.subcommand == "top") return top_command(g, c.top);
    if (c.subcommand == "demo") return demo_command(g, c.demo);
    if (c.subcommand == "demo-worker") return demo_worker(g, c.demo);
  } catch (const failure& f) {
    // Messages may quote the library's, which may quote the URL: its password goes. A name may
    // hold a newline: escaped, the message stays one line.
    std::cerr << "relock: " << escaped(without_script_position(without_secret(f.what(), g.url)))
              << "\n";
    return f.code;
  } catch (const std::exception& e) {  // relock::error included: a name the library refuses
    std::cerr << "relock: " << escaped(without_script_position(without_secret(e.what(), g.url)))
              << "\n";
    return exit_usage;
  }
  return exit_usage;
}
