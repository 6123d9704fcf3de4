// SPDX-License-Identifier: Apache-2.0
// relock semaphore release|set|add: a permit-expirable semaphore's administration from the
// shell, where it used to take redis-cli by hand: give back a permit whose holder is gone (by
// the id status shows), or change how many permits there are.
#include <iostream>

#include "cli.hpp"

namespace relock_cli {
namespace {

// The name must hold a semaphore, or nothing (set and add make one): a lock's or a queue's data
// is refused before anything is written.
void check_kind(relock::client& client, const std::string& name, bool may_be_absent) {
  using relock::object_kind;
  const auto info = client.inspect(name);
  if (info.kind == object_kind::permit_semaphore || info.kind == object_kind::counter) return;
  if (info.kind == object_kind::none && info.redis_type == "none") {
    if (may_be_absent) return;
    throw failure(exit_conflict,
                  "'" + name + "' holds nothing: no semaphore, no permit to give back");
  }
  if (info.kind != object_kind::unknown) {
    throw failure(exit_usage, "'" + name + "' holds a lock (kind " +
                                  std::string(relock::to_string(info.kind)) +
                                  "), not a semaphore; left as it is");
  }
  throw failure(exit_usage, not_a_lock(info) + "; not a semaphore either, left as it is");
}

}  // namespace

int semaphore_command(const global_options& g, const semaphore_admin_options& o) {
  auto settings = make_config(g);
  settings.connect_timeout = one_shot_timeout;  // one read or write: no reason to wait 10 s
  auto client = connect(g, std::move(settings));
  try {
    auto semaphore = client.permit_expirable_semaphore(o.name);
    check_kind(client, o.name, o.action != "release");
    if (o.action == "release") {
      if (!semaphore.try_release(o.permit)) {
        std::cerr << "relock: '" << escaped(o.name) << "' has no permit " << escaped(o.permit)
                  << " taken (given back, expired, or never taken)\n";
        return exit_conflict;
      }
      std::cout << escaped(o.name) << ": permit " << o.permit << " given back\n";
      return exit_ok;
    }
    if (o.action == "set") {
      semaphore.set_permits(o.permits);
    } else {
      semaphore.add_permits(o.permits);
    }
    std::cout << escaped(o.name) << ": " << semaphore.available_permits() << " available, "
              << semaphore.acquired_permits() << " taken\n";
    return exit_ok;
  } catch (const relock::error& e) {
    if (e.code() == relock::errc::invalid_argument) throw failure(exit_usage, e.what());
    fail_with(g, e, "semaphore " + o.action + " '" + o.name + "'");
  }
}

}  // namespace relock_cli
