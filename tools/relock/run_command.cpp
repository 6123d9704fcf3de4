// SPDX-License-Identifier: Apache-2.0
// relock run: acquire NAME (or a set: --all, --redlock; or a permit of a semaphore:
// --semaphore), run the command while holding it, release, pass its status on.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>

#include "child_supervisor.hpp"
#include "cli.hpp"
#include "output.hpp"
#include "run_target.hpp"

extern char** environ;

namespace relock_cli {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> command_environment(const std::string& name, const acquisition& got) {
  std::vector<std::string> env{"RELOCK_NAME=" + name};
  if (got.token) env.push_back("RELOCK_TOKEN=" + std::to_string(*got.token));
  if (got.permit) env.push_back("RELOCK_PERMIT=" + *got.permit);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    // Ours replace an outer `relock run`'s; a fencing token or permit from one would be a lie.
    if (entry.starts_with("RELOCK_NAME=") || entry.starts_with("RELOCK_TOKEN=") ||
        entry.starts_with("RELOCK_PERMIT=")) {
      continue;
    }
    env.emplace_back(entry);
  }
  return env;
}

// Counts the watchdog's renewals that reached Redis, for the report. Called on relock's I/O thread.
class renewal_count : public relock::observer {
 public:
  void on_renewal(const relock::renewal_event& e) override {
    if (!e.error) renewals_.fetch_add(static_cast<std::int64_t>(e.holds));
  }
  std::int64_t renewals() const { return renewals_.load(); }

 private:
  std::atomic<std::int64_t> renewals_{0};
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Acquires, runs, releases; says how it went in `report`.
int run_holding(const global_options& given, const run_options& o, run_report& report) {
  const auto started = std::chrono::steady_clock::now();
  std::optional<milliseconds> wait, lease;
  if (o.wait_seconds) wait = to_duration(*o.wait_seconds, "--wait", false);
  if (o.lease_seconds) lease = to_duration(*o.lease_seconds, "--lease", true);
  // -w is the deadline of everything before COMMAND starts, connecting included: a server that
  // accepts but does not answer (stopped, swapping) costs what is left of it, not 10 s.
  // A red_lock's servers connect at once, each within its share of the wait, as each then gets
  // a share of it to grant the lock: one that does not answer costs that share and its vote.
  global_options g = given;
  if (wait && !o.nonblock) {
    const auto servers = std::max<std::size_t>(o.redlock_urls.size(), 1);
    g.connect_timeout = connect_timeout_for(*wait / static_cast<milliseconds::rep>(servers));
  }

  std::stop_source cancel;
  child_supervisor supervisor(cancel);  // before the client: its I/O thread inherits the mask
  const auto target = make_target(g, o);
  const auto name = target->name();
  report.name = name;
  const auto me = relock::owner::current_thread();

  relock::lock_options options;
  options.lease = lease;
  options.stop = cancel.get_token();
  // The library says which loss it was: found gone, or no renewal got through for a lease.
  options.on_lost = [&supervisor,
                     away =
                         "Redis at " + target->where() + " stopped answering and the lease ran out",
                     gone = target->gone()](std::error_code why) {
    supervisor.lost(why == relock::errc::renewal_failed ? away : gone);
  };
  // A hold taken away by a force unlock (anyone's, Java's too) stops the command within a round
  // trip, not at the next renewal, up to a third of the lease later. Not a spin lock's: it is
  // for where pub/sub is scarce, and uses none.
  options.listen_for_loss = kind_of(o) != "spin";
  if (!o.nonblock && wait) {
    // What connecting left of the deadline; none left: one try.
    const auto spent =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    options.wait = std::max(*wait - spent, milliseconds(0));
  }
  supervisor.waiting();
  acquisition got;
  try {
    got = target->acquire(me, std::move(options), o.nonblock || wait);
  } catch (const std::system_error& e) {
    report.waited_seconds = seconds_since(started);
    if (e.code() == relock::errc::cancelled && supervisor.interrupted_by() != 0) {
      report.outcome = "interrupted";
      return 128 + supervisor.interrupted_by();
    }
    global_options at = g;
    at.url = target->where();
    if (!o.redlock_urls.empty()) at.url_flag = "--redlock";
    fail_with(at, e, "cannot " + target->acquiring());
  }
  report.waited_seconds = seconds_since(started);
  if (!got.acquired) {
    std::cerr << "relock: " << escaped(target->busy()) << "; "
              << (o.nonblock ? "not waiting (-n)" : "gave up after " + seconds_text(*wait)) << "\n";
    report.outcome = "busy";
    return o.conflict_exit_code;
  }
  const auto acquired_at = std::chrono::steady_clock::now();

  std::optional<int> status;
  try {
    if (supervisor.start(o.command, command_environment(name, got),
                         lease ? target->lease_end(me, *lease) : std::nullopt)) {
      status = supervisor.wait();
    }
  } catch (const failure&) {
    target->unlock();  // could not start the command: release, then say why
    throw;
  }
  std::error_code released;
  target->unlock(released);
  report.held_seconds = seconds_since(acquired_at);
  report.command_status = status;

  std::string why;
  if (auto reason = supervisor.lost_reason()) {
    why = *reason;
  } else if (released == relock::errc::lock_lost || released == relock::errc::not_owner) {
    why = "it was deleted, or its lease ran out, before the command ended";
  }
  if (!why.empty()) {
    std::cerr << "relock: lost " << escaped(target->held()) << " "
              << (!status ? "before the command started" : "while the command ran") << ": " << why
              << (supervisor.stopped_command() ? "; the command got SIGTERM" : "") << "\n";
    report.outcome = "lost";
    report.detail = why;
    return exit_lock_lost;
  }
  if (!status) {  // a signal before the command began
    report.outcome = "interrupted";
    return 128 + supervisor.interrupted_by();
  }
  report.outcome = "ran";
  if (released) {
    std::cerr << "relock: warning: releasing '" << escaped(name) << "' failed ("
              << released.message() << "); it expires at the end of its lease\n";
  }
  return *status;
}

}  // namespace

int run_command(const global_options& given, const run_options& o) {
  std::optional<std::string> path = o.report;
  if (!path && given.json) path = "-";
  global_options g = given;
  auto counter = std::make_shared<renewal_count>();
  if (path) g.observer = counter;
  run_report report;
  report.name = o.name;
  const auto written = [&] {
    report.renewals = counter->renewals();
    std::string why;
    if (!write_report(report, *path, why)) {
      std::cerr << "relock: cannot write the report to " << escaped(*path) << ": " << why << "\n";
    }
  };
  try {
    report.exit_status = run_holding(g, o, report);
  } catch (const failure& f) {
    if (!path) throw;
    report.outcome = "error";
    report.exit_status = f.code;
    report.detail = f.what();
    written();
    throw;
  }
  if (path) written();
  return report.exit_status;
}

}  // namespace relock_cli
