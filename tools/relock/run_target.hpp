// SPDX-License-Identifier: Apache-2.0
// What `relock run` holds: one lock (NAME), a multi-lock (--all), a red_lock (--redlock), or a
// permit of the permit-expirable semaphore NAME (--semaphore N). run_command drives any of them
// the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <relock/client.hpp>

#include "cli.hpp"

namespace relock_cli {

// What acquiring came to: whether run holds the lock, and the fencing token it was given.
struct acquisition {
  bool acquired = false;
  std::optional<std::int64_t> token;    // a fenced lock's: this acquisition's own
  std::optional<std::string> permit{};  // a semaphore's: the permit's id (32 hex chars)
};

class run_target {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~run_target() = default;

  // For messages, and RELOCK_NAME: NAME, or the --all names joined with commas.
  virtual std::string name() const = 0;
  // Where it lives, for messages: the URL (or URLs), password hidden.
  virtual std::string where() const = 0;
  // `bounded`: give up when options.wait runs out (at once when it is empty: -n); otherwise
  // wait for as long as it takes. Throws std::system_error (cancelled, connection...).
  virtual acquisition acquire(relock::owner me, relock::lock_options options, bool bounded) = 0;
  // When a hold with an explicit `lease` ends, by our clock: read after the acquire, never
  // late. nullopt: it has no end.
  virtual std::optional<time_point> lease_end(relock::owner me,
                                              std::chrono::milliseconds lease) = 0;
  virtual void unlock(std::error_code& ec) noexcept = 0;
  void unlock() noexcept {
    std::error_code ignored;
    unlock(ignored);
  }

  // Words for run's messages, a lock's unless the target says otherwise.
  // What is held: "lost the lock 'NAME' while the command ran".
  virtual std::string held() const { return "the lock '" + name() + "'"; }
  // What acquiring failed to do: "cannot lock 'NAME': ...".
  virtual std::string acquiring() const { return "lock '" + name() + "'"; }
  // Why it was not acquired: "'NAME' is held by another owner; gave up after 10 s".
  virtual std::string busy() const { return "'" + name() + "' is held by another owner"; }
  // Why a hold the library found gone is gone (the loss is not a renewal failure).
  virtual std::string gone() const { return "its key was deleted or taken over, or it expired"; }
};

// The kind asked for, by --kind or -s/-x (flock's shared and exclusive: the two sides of the
// read-write lock NAME).
std::string kind_of(const run_options& o);
// The kind's lock on `name`.
relock::mutex lock_of(relock::client& client, const std::string& name, const run_options& o);

// Connects (to --url, or to each --redlock URL: redlock_servers.hpp) and makes what `o` asks
// for. A --semaphore is set up (created with its N permits, when absent) by the first acquire.
std::unique_ptr<run_target> make_target(const global_options& g, const run_options& o);

}  // namespace relock_cli
