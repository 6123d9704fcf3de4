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
    if (info.kind == relock::object_kind::counter || info.kind == relock::object_kind::unknown) {
      return not_a_lock(info) + "; left as it is";
    }
  } catch (const relock::error&) {
    // The refusal's own words below say enough.
  }
  return "'" + name + "' holds something that is not a lock (" + e.what() + "); left as it is";
}

// A read-write lock is released by its own script: it also deletes every read hold's timeout
// key and wakes the waiters on its own channel. Its data says which it is.
relock::Lock lock_for_unlock(relock::client& client, const std::string& name) {
  if (client.inspect(name).kind == relock::object_kind::read_write_lock) {
    return client.read_write_lock(name).write_lock();
  }
  return client.lock(name);
}

}  // namespace

int unlock_command(const global_options& g, const std::string& name) {
  auto client = connect(g, make_config(g));
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
