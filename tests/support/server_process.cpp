// SPDX-License-Identifier: Apache-2.0
#include "support/server_process.hpp"

#include "support/log_file.hpp"

#include <unistd.h>

#include <stdexcept>
#include <utility>

#include "process/spawn.hpp"

namespace relock::test {

server_process::~server_process() = default;

server_process::server_process(server_process&& other) noexcept
    : child_(std::move(other.child_)),
      output_(std::move(other.output_)),
      output_offset_(other.output_offset_) {}

void server_process::spawn(std::vector<std::string> argv, std::filesystem::path output) {
  if (running()) {
    throw std::logic_error("server_process: pid " + std::to_string(pid()) + " still runs");
  }
  if (argv.empty()) throw std::invalid_argument("server_process: empty argv");
  std::error_code ignored;
  auto size = std::filesystem::file_size(output, ignored);
  output_offset_ = ignored ? 0 : size;
  output_ = std::move(output);
  child_.spawn(argv, {.output = output_});
}

server_process::start server_process::wait_started(const std::function<bool()>& answers,
                                                   std::chrono::milliseconds timeout,
                                                   const std::string& who) {
  // Probing is a refused connect until the server listens: cheap, so poll often (starts take
  // ~3 ms).
  const auto ready = wait_ready(answers, timeout, std::chrono::milliseconds(2));
  if (ready == readiness::ready) return start::ready;
  if (ready == readiness::exited &&
      output_since_spawn().find("Address already in use") != std::string::npos) {
    return start::port_in_use;
  }
  const std::string what = ready == readiness::exited
                               ? describe_exit()
                               : "did not answer within " + std::to_string(timeout.count()) + " ms";
  kill();
  throw std::runtime_error(who + " " + what + "; last lines of " + output_.string() + ":\n" +
                           output_tail());
}

std::string server_process::output_tail(std::size_t lines) const {
  return last_lines(output_, lines);
}

std::string server_process::output_since_spawn() const {
  return read_from(output_, output_offset_);
}

std::filesystem::path find_program(const std::string& program,
                                   const std::filesystem::path& fallback) {
  if (auto found = process::find_on_path(program)) return *found;
  if (::access(fallback.c_str(), X_OK) == 0) return fallback;
  throw std::runtime_error(program + " not found on PATH nor at " + fallback.string() +
                           " (run scripts/setup)");
}

}  // namespace relock::test
