// SPDX-License-Identifier: Apache-2.0
// relock unlock --force: take a lock away from whoever holds it (a crashed job's, say) and wake
// its waiters. There is no plain unlock: a hold belongs to its owner, and `relock run` releases
// its own.
#include "cli.hpp"
#include "output.hpp"

namespace relock_cli {
namespace {

// The library refused, changing nothing: say what the name holds instead, as status would.
std::string refusal(relock::client& client, const std::string& name, const relock::error& e) {
  try {
    const auto info = client.inspect(name);
    if (info.kind == relock::object_kind::counter || info.kind == relock::object_kind::unknown ||
        info.kind == relock::object_kind::permit_semaphore) {
      return not_a_lock(info) + "; left as it is";
    }
  } catch (const relock::error&) {
    // The refusal's own words below say enough.
  }
  return "'" + name + "' holds something that is not a lock (" + e.what() + "); left as it is";
}

// The kind's own force release, as its data shows it. A read-write lock's also deletes every
// read hold's timeout key and wakes the waiters on its own channel. Every other kind holds the
// reentrant lock's hash, and the fair lock's release suits them all: it deletes the hash, wakes
// a plain waiter on the lock's channel and tells a fair queue's head on its own. A fair lock
// looks like a plain one while nobody queues, and a waiter may queue between the inspect and the
// release: it is told all the same.
relock::mutex lock_for_unlock(relock::client& client, const std::string& name) {
  if (client.inspect(name).kind == relock::object_kind::read_write_lock) {
    return client.read_write_lock(name).write_lock();
  }
  return client.fair_lock(name);
}

}  // namespace

int unlock_command(const global_options& g, const std::string& name) {
  auto settings = make_config(g);
  settings.connect_timeout = one_shot_timeout;  // one read or write: no reason to wait 10 s
  auto client = connect(g, std::move(settings));
  client.lock(name);  // the library's checks on the name: empty, too long
  unlock_result r{name, false};
  try {
    r.released = lock_for_unlock(client, name).force_unlock();
  } catch (const relock::error& e) {
    if (e.code() == relock::errc::wrong_type) throw failure(exit_usage, refusal(client, name, e));
    fail_with(g, e, "cannot unlock '" + name + "'");
  }
  print(r, g.json);
  return r.released ? exit_ok : exit_conflict;
}

}  // namespace relock_cli
