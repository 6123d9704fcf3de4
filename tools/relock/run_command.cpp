// relock run: acquire NAME, run the command while holding it, release, pass its status on.
#include <cstdint>
#include <iostream>
#include <optional>
#include <variant>

#include <asio/use_future.hpp>

#include "child_supervisor.hpp"
#include "cli.hpp"

extern char** environ;

namespace relock_cli {
namespace {

using std::chrono::milliseconds;

// The kind asked for, by --kind or -s/-x (flock's shared and exclusive: the two sides of the
// read-write lock NAME).
std::string kind_of(const run_options& o) {
  return o.shared ? "read" : o.exclusive ? "write" : o.kind;
}

// The lock run holds. A fenced lock keeps its own type: it is acquired through the calls that
// hand back the acquisition's token.
using run_lock = std::variant<relock::Lock, relock::FencedLock>;

run_lock lock_of(relock::client& client, const run_options& o) {
  const std::string kind = kind_of(o);
  if (kind == "lock") return client.lock(o.name);
  if (kind == "read") return client.read_write_lock(o.name).read_lock();
  if (kind == "write") return client.read_write_lock(o.name).write_lock();
  if (kind == "fair") return client.fair_lock(o.name);
  if (kind == "fenced") return client.fenced_lock(o.name);
  if (kind == "spin") return client.spin_lock(o.name);
  throw failure(exit_usage, "unknown lock kind '" + kind + "'");  // the parser lets none through
}

relock::Lock& as_lock(run_lock& lock) {
  return std::visit([](relock::Lock& l) -> relock::Lock& { return l; }, lock);
}

// What acquiring came to: whether run holds the lock, and the fencing token it was given.
struct acquisition {
  bool acquired = false;
  std::optional<std::int64_t> token;  // a fenced lock's: this acquisition's own
};

// `bounded`: give up when options.wait runs out (at once when it is empty: -n); otherwise wait
// for as long as it takes. Throws std::system_error (cancelled, connection...).
acquisition acquire(run_lock& lock, relock::owner me, relock::lock_options options, bool bounded) {
  using asio::use_future;
  if (auto* fenced = std::get_if<relock::FencedLock>(&lock)) {
    if (!bounded) {
      return {true, fenced->async_lock_and_get_token(me, std::move(options), use_future).get()};
    }
    const auto token =
        fenced->async_try_lock_and_get_token(me, std::move(options), use_future).get();
    return {token.has_value(), token};
  }
  if (!bounded) {
    as_lock(lock).async_lock(me, std::move(options), use_future).get();
    return {true, std::nullopt};
  }
  return {as_lock(lock).async_try_lock(me, std::move(options), use_future).get(), std::nullopt};
}

std::vector<std::string> command_environment(const std::string& name,
                                             std::optional<std::int64_t> token) {
  std::vector<std::string> env{"RELOCK_NAME=" + name};
  if (token) env.push_back("RELOCK_TOKEN=" + std::to_string(*token));
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    // Ours replace an outer `relock run`'s; a fencing token from one would be a lie here.
    if (entry.starts_with("RELOCK_NAME=") || entry.starts_with("RELOCK_TOKEN=")) continue;
    env.emplace_back(entry);
  }
  return env;
}

// When the hold expires in Redis, by our clock: read after the acquire, so never late.
std::optional<child_supervisor::time_point> lease_end(relock::Lock& lock, milliseconds lease) {
  const auto asked = std::chrono::steady_clock::now();
  try {
    const auto left = lock.remaining_lease().value_or(milliseconds(0));
    if (left == milliseconds::max()) return std::nullopt;  // no expiry: nothing to stop
    return asked + left;
  } catch (const relock::error&) {
    return asked + lease;  // the PTTL did not come back: the lease as we asked it
  }
}

}  // namespace

int run_command(const global_options& g, const run_options& o) {
  std::optional<milliseconds> wait, lease;
  if (o.wait_seconds) wait = to_duration(*o.wait_seconds, "--wait", false);
  if (o.lease_seconds) lease = to_duration(*o.lease_seconds, "--lease", true);

  std::stop_source cancel;
  child_supervisor supervisor(cancel);  // before the client: its I/O thread inherits the mask
  auto client = connect(g, make_config(g));
  auto held = lock_of(client, o);
  relock::Lock& lock = as_lock(held);
  const auto me = relock::owner::current_thread();

  relock::lock_options options;
  options.lease = lease;
  options.stop = cancel.get_token();
  // The library says which loss it was: found gone, or no renewal got through for a lease.
  options.on_lost = [&supervisor,
                     away = "Redis at " + shown_url(g.url) +
                            " stopped answering and the lease ran out"](std::error_code why) {
    supervisor.lost(why == relock::errc::renewal_failed
                        ? away
                        : "its key was deleted or taken over, or it expired");
  };
  // A hold taken away by a force unlock (anyone's, Java's too) stops the command within a round
  // trip, not at the next renewal, up to a third of the lease later. Not a spin lock's: it is
  // for where pub/sub is scarce, and uses none.
  options.listen_for_loss = kind_of(o) != "spin";
  if (!o.nonblock) options.wait = wait;
  supervisor.waiting();
  acquisition got;
  try {
    got = acquire(held, me, std::move(options), o.nonblock || wait);
  } catch (const std::system_error& e) {
    if (e.code() == relock::errc::cancelled && supervisor.interrupted_by() != 0) {
      return 128 + supervisor.interrupted_by();
    }
    fail_with(g, e, "cannot lock '" + o.name + "'");
  }
  if (!got.acquired) {
    std::cerr << "relock: '" << o.name << "' is held by another owner; "
              << (o.nonblock ? "not waiting (-n)" : "gave up after " + seconds_text(*wait)) << "\n";
    return o.conflict_exit_code;
  }

  std::optional<int> status;
  try {
    if (supervisor.start(o.command, command_environment(o.name, got.token),
                         lease ? lease_end(lock, *lease) : std::nullopt)) {
      status = supervisor.wait();
    }
  } catch (const failure&) {
    lock.unlock();  // could not start the command: release, then say why
    throw;
  }
  std::error_code released;
  lock.unlock(released);

  std::string why;
  if (auto reason = supervisor.lost_reason()) {
    why = *reason;
  } else if (released == relock::errc::lock_lost || released == relock::errc::not_owner) {
    why = "it was deleted, or its lease ran out, before the command ended";
  }
  if (!why.empty()) {
    std::cerr << "relock: lost the lock '" << o.name << "' "
              << (!status ? "before the command started" : "while the command ran") << ": " << why
              << (supervisor.stopped_command() ? "; the command got SIGTERM" : "") << "\n";
    return exit_lock_lost;
  }
  if (!status) return 128 + supervisor.interrupted_by();  // a signal before the command began
  if (released) {
    std::cerr << "relock: warning: releasing '" << o.name << "' failed (" << released.message()
              << "); it expires at the end of its lease\n";
  }
  return *status;
}

}  // namespace relock_cli
