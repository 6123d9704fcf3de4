// The relock CLI's shared pieces: exit codes, options, and one function per subcommand.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <relock/client.hpp>

namespace relock_cli {

// Exit codes, as --help lists them.
constexpr int exit_ok = 0;
constexpr int exit_conflict = 1;     // default of --conflict-exit-code, as flock(1)
constexpr int exit_usage = 2;        // bad flags, Redis unreachable, a refused name or duration
constexpr int exit_lock_lost = 3;    // the lock was lost while the command ran
constexpr int exit_cannot_run = 126;
constexpr int exit_not_found = 127;

// A message for the user, printed once on stderr, and the exit code to leave with.
struct failure : std::runtime_error {
  failure(int code_, const std::string& what) : std::runtime_error(what), code(code_) {}
  int code;
};

struct global_options {
  std::string url;
  bool url_given = false;  // --url or $RELOCK_URL, as opposed to the default
  std::optional<double> watchdog_seconds;
  bool json = false;
};

struct run_options {
  std::string name;
  std::vector<std::string> command;
  std::optional<double> wait_seconds;
  bool nonblock = false;
  int conflict_exit_code = exit_conflict;
  std::optional<double> lease_seconds;
  std::string kind = "lock";
  bool shared = false;
  bool exclusive = false;
};

// "0.5" seconds -> 500 ms (rounded up), refusing negative, absurd or malformed values.
std::chrono::milliseconds to_duration(double seconds, const char* flag, bool zero_allowed);

relock::config make_config(const global_options& g);
// Connects, turning the library's connection errors into one line that says what to do.
relock::client connect(const global_options& g, relock::config settings);

int run_command(const global_options& g, const run_options& o);
int status_command(const global_options& g, const std::string& name);
int unlock_command(const global_options& g, const std::string& name, bool force);
int demo_command(const global_options& g, int workers, int iterations);
int demo_worker(const std::string& url, int iterations, int worker);

}  // namespace relock_cli
