// SPDX-License-Identifier: Apache-2.0
// relock status: who holds NAME and how often, its lease, a fair lock's queue with each
// waiter's deadline and a fenced lock's last token, as client::inspect reads them from the
// data, so holders in Java (Redisson) show up too; and the node that serves it (in a cluster,
// the master of its slot). For a queue: its length, and the delayed queue feeding it. For a
// counter (a semaphore or a count-down latch): its value; for a permit-expirable semaphore, its
// available permits and the permits taken, with their expiries.
#include <chrono>

#include "cli.hpp"
#include "output.hpp"

namespace relock_cli {
namespace {

bool lock_family(relock::object_kind kind) {
  using relock::object_kind;
  return kind == object_kind::none || kind == object_kind::lock ||
         kind == object_kind::read_write_lock || kind == object_kind::fair_lock ||
         kind == object_kind::fenced_lock;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

lock_status shown(const relock::lock_info& info) {
  lock_status s;
  s.name = info.name;
  s.node = info.node;
  s.synced_replicas = info.synced_replicas;
  s.online_replicas = info.online_replicas;
  s.replicas_acknowledging = info.replicas_acknowledging;
  // "none": no key holds anything for the name (a lock of it would be free).
  s.kind = info.kind == relock::object_kind::none && info.redis_type == "none" ? "none"
           : info.kind == relock::object_kind::none                            ? "lock"
                                                    : relock::to_string(info.kind);
  s.locked = info.redis_type == "hash";
  const auto lease = info.remaining_lease;
  if (s.locked && lease && *lease != std::chrono::milliseconds::max()) {
    s.remaining_lease_ms = lease->count();
  }
  s.mode = info.mode;
  s.fencing_token = info.fencing_token;
  for (const auto& h : info.holders) {
    holder out{h.owner, h.holds, relock::to_string(h.side)};
    for (const auto& left : h.read_leases) {
      out.read_leases_ms.push_back(left ? std::optional(left->count()) : std::nullopt);
    }
    s.holders.push_back(std::move(out));
  }
  const auto now = now_ms();
  for (const auto& w : info.waiters) {
    waiter out{w.owner, w.gives_up_at_ms, std::nullopt};
    if (w.gives_up_at_ms) out.gives_up_in_ms = *w.gives_up_at_ms - now;
    s.queue.push_back(std::move(out));
  }
  return s;
}

counter_status shown_counter(const relock::lock_info& info) {
  counter_status s;
  s.name = info.name;
  s.node = info.node;
  s.kind = relock::to_string(info.kind);
  s.value = info.value;
  s.permits_taken = info.permits_taken;
  const auto now = now_ms();
  for (const auto& p : info.permits) {
    permit out{p.id, p.expires_at_ms, std::nullopt};
    if (p.expires_at_ms) out.expires_in_ms = *p.expires_at_ms - now;
    s.permits.push_back(std::move(out));
  }
  return s;
}

// Each holder's host, pid and address, from CLIENT LIST on the node that serves the lock: the
// holder's connections are there, named after its client id.
void find_processes(const relock::client& client, lock_status& s) {
  const auto directory = client_directory::read(client, {s.node, relock::node_role::master});
  if (!directory.available()) {
    s.process_lookup_failed = directory.why_not();
    return;
  }
  for (auto& h : s.holders) h.process = directory.find(h.owner);
}

}  // namespace

int status_command(const global_options& g, const std::string& name) {
  auto settings = make_config(g);
  settings.connect_timeout = one_shot_timeout;  // one read or write: no reason to wait 10 s
  auto client = connect(g, std::move(settings));
  client.lock(name);  // the library's checks on the name, with its words: empty, too long
  relock::lock_info info;
  try {
    info = client.inspect(name);
  } catch (const relock::error& e) {
    fail_with(g, e, "cannot read '" + name + "'");
  }
  // A list, or a free name that a delayed queue feeds: a queue (Redisson's RBlockingQueue).
  if ((info.redis_type == "list" || info.kind == relock::object_kind::none) &&
      print_queue_status(client, g, name)) {
    return exit_ok;
  }
  const std::string server = info.server.empty() ? "unknown" : info.server;
  if (info.kind == relock::object_kind::counter ||
      info.kind == relock::object_kind::permit_semaphore) {
    auto status = shown_counter(info);
    status.server = server;
    print(status, g.json);
    return exit_ok;
  }
  if (!lock_family(info.kind)) throw failure(exit_usage, not_a_lock(info));
  auto status = shown(info);
  status.server = server;
  if (!status.holders.empty()) find_processes(client, status);
  print(status, g.json);
  return exit_ok;
}

}  // namespace relock_cli
