// relock unlock --force: take a lock away from whoever holds it (a crashed job's, say) and wake
// its waiters. There is no plain unlock: a hold belongs to its owner, and `relock run` releases
// its own.
#include "cli.hpp"
#include "output.hpp"

namespace relock_cli {

int unlock_command(const global_options& g, const std::string& name) {
  auto client = connect(g, make_config(g));
  auto lock = client.lock(name);
  unlock_result r{name, false};
  try {
    r.released = lock.force_unlock();
  } catch (const relock::error& e) {
    fail_with(g, e, "cannot unlock '" + name + "'");
  }
  print(r, g.json);
  return r.released ? exit_ok : exit_conflict;
}

}  // namespace relock_cli
