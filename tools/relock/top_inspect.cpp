// SPDX-License-Identifier: Apache-2.0
#include "top_inspect.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>

namespace relock_cli {
namespace {

// Inspects in flight at once: enough to keep one connection busy, few enough that a refresh of
// thousands of objects does not queue thousands of replies.
constexpr std::size_t window = 64;

// A name top cannot read, where the others may still be: one the library refuses (a key over
// 64 KiB), or one outside the user's ACL key rules (SCAN lists every key whatever the rules).
bool unreadable(const relock::error& e) {
  return e.code() == relock::errc::invalid_argument || e.code() == relock::errc::no_permission;
}
bool unreadable(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const relock::error& error) {
    return unreadable(error);
  } catch (...) {
    return false;
  }
}

// client::inspect of every name, `window` at a time. An unreadable name has none, and counts in
// `refused`; any other failure is thrown once all that were sent have answered.
std::vector<std::optional<relock::lock_info>> inspect_all(const relock::client& client,
                                                          const std::vector<std::string>& names,
                                                          std::size_t& refused) {
  std::vector<std::optional<relock::lock_info>> out(names.size());
  std::mutex m;
  std::condition_variable answered;
  std::size_t next = 0, in_flight = 0;
  std::exception_ptr failed;
  std::unique_lock lock(m);
  for (;;) {
    while (next < names.size() && in_flight < window && !failed) {
      const auto i = next++;
      ++in_flight;
      lock.unlock();  // the answer may come at once, on this thread
      client.async_inspect(
          names[i], relock::with_detail([&, i](std::exception_ptr e, relock::lock_info info) {
            std::lock_guard guard(m);
            if (!e) {
              out[i] = std::move(info);
            } else if (unreadable(e)) {
              ++refused;
            } else if (!failed) {
              failed = e;
            }
            --in_flight;
            answered.notify_one();
          }));
      lock.lock();
    }
    if (in_flight == 0 && (next == names.size() || failed)) break;
    answered.wait(lock);
  }
  if (failed) std::rethrow_exception(failed);
  return out;
}

top_object lock_row(const relock::lock_info& info) {
  top_object o;
  o.name = info.name;
  o.node = info.node;
  o.kind = relock::to_string(info.kind);
  for (const auto& h : info.holders) {
    o.holders.push_back({h.owner, h.holds, relock::to_string(h.side), std::nullopt});
  }
  const auto lease = info.remaining_lease;
  if (info.redis_type == "hash" && lease && *lease != std::chrono::milliseconds::max()) {
    o.remaining_lease_ms = lease->count();
  }
  if (info.kind == relock::object_kind::fair_lock) {
    o.waiters = static_cast<std::int64_t>(info.waiters.size());
  }
  return o;
}

top_object counter_row(const relock::lock_info& info) {
  top_object o;
  o.name = info.name;
  o.node = info.node;
  o.kind = relock::to_string(info.kind);
  o.permits = info.value;
  if (info.kind == relock::object_kind::permit_semaphore) o.permits_taken = info.permits_taken;
  return o;
}

// A list under the name, or a delayed queue feeding it: a queue. None when neither.
std::optional<top_object> queue_row(const relock::client& client, const relock::lock_info& info,
                                    std::size_t& refused) {
  relock::queue_info q;
  try {
    q = client.inspect_queue(info.name);
  } catch (const relock::error& e) {
    if (!unreadable(e)) throw;
    ++refused;
    return std::nullopt;
  }
  if (q.redis_type != "list" && q.delayed == 0) return std::nullopt;
  top_object o;
  o.name = info.name;
  o.node = info.node;
  o.kind = "queue";
  o.length = q.length;
  o.delayed = q.delayed;
  return o;
}

}  // namespace

std::vector<top_object> read_objects(const relock::client& client,
                                     const std::vector<std::string>& names, std::size_t& refused) {
  std::vector<top_object> objects;
  refused = 0;
  for (const auto& info : inspect_all(client, names, refused)) {
    if (!info) continue;
    using relock::object_kind;
    switch (info->kind) {
      case object_kind::lock:
      case object_kind::fair_lock:
      case object_kind::fenced_lock:
      case object_kind::read_write_lock:
        objects.push_back(lock_row(*info));
        break;
      case object_kind::counter:
      case object_kind::permit_semaphore:
        objects.push_back(counter_row(*info));
        break;
      case object_kind::none:
      case object_kind::unknown:
        // Only a list or a delayed queue's keys make a queue: other types are not ours to show.
        if (info->redis_type == "list" || info->redis_type == "none") {
          if (auto q = queue_row(client, *info, refused)) objects.push_back(std::move(*q));
        }
        break;
    }
  }
  return objects;
}

}  // namespace relock_cli
