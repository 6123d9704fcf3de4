#include "renewal/watchdog.hpp"

#include <relock/errors.hpp>

#include "topology/slot.hpp"

namespace relock::renewal {

watchdog::watchdog(exec::executor& executor, pubsub::subscriber& subscriber,
                   watchdog_options options)
    : executor_(executor),
      subscriber_(subscriber),
      options_(std::move(options)),
      timer_(executor.io()) {}

void watchdog::log(log_level level, const std::string& text) const {
  if (options_.log) options_.log(level, text);
}

void watchdog::held(const std::string& key, const std::string& field,
                    std::chrono::milliseconds lease, const exec::script* renew,
                    std::function<void(std::error_code)> on_lost, const std::string& listen_on,
                    std::string renew_arg) {
  hold_key id{key, field};
  lost_.erase(id);
  hold& h = holds_[id];
  if (h.count == 0) h.generation = next_generation_++;
  if (!listen_on.empty() && !h.listener) {
    const std::uint64_t generation = h.generation;
    // Any event may mean the hold was taken away (a message) or that messages were missed (a
    // resubscription): check. A check while disconnected fails, and the renewal still guards.
    h.listener = subscriber_.add(
        listen_on,
        [this, id, generation](const pubsub::event& e) {
          if (e.kind != pubsub::event_kind::disconnected) check_still_held(id, generation);
        },
        [](std::error_code) {});
  }
  // Conservative: the acquire ran on the server before its reply, so before now.
  h.confirmed_at = std::chrono::steady_clock::now();
  ++h.count;
  h.lease = lease;
  h.renew = renew;
  h.renew_arg = renew_arg.empty() ? field : std::move(renew_arg);
  if (on_lost) h.on_lost = std::move(on_lost);
  if (renew != nullptr) arm(/*after_tick=*/false);
}

watchdog::release_plan watchdog::releasing(const std::string& key, const std::string& field) {
  hold_key id{key, field};
  release_plan plan;
  if (lost_.erase(id) != 0) {
    plan.known = plan.lost = true;
    return plan;
  }
  auto it = holds_.find(id);
  if (it == holds_.end()) {
    plan.lease = options_.lease;
    return plan;
  }
  plan.known = true;
  plan.lease = it->second.lease;
  if (--it->second.count <= 0) drop(it);
  return plan;
}

void watchdog::forget(const std::string& key, const std::string& field) {
  if (auto it = holds_.find(hold_key{key, field}); it != holds_.end()) drop(it);
}

void watchdog::drop(std::map<hold_key, hold>::iterator it) {
  if (it->second.listener) subscriber_.remove(it->second.listener);
  holds_.erase(it);
}

void watchdog::check_still_held(const hold_key& id, std::uint64_t generation) {
  resp::request hexists;
  hexists.push({"HEXISTS", id.first, id.second});
  executor_.run(id.first, std::move(hexists),
                [this, id, generation](std::error_code ec, resp::reply r) {
                  auto it = holds_.find(id);
                  if (ec || it == holds_.end() || it->second.generation != generation) return;
                  if (r.integer == 0) lost(id, errc::lock_lost);
                });
}

void watchdog::stop() {
  timer_.cancel();
  armed_ = false;
}

void watchdog::arm(bool after_tick) {
  if (armed_) return;
  armed_ = true;
  // After a tick, the next is planned from that tick's planned time, not from now: a late tick
  // must not push every later renewal back (under load, ticks drifted until keys expired).
  // When it is already due, it runs at once. The first tick after idling is a period away.
  const auto now = std::chrono::steady_clock::now();
  const auto period = options_.lease / 3;
  next_tick_ = after_tick ? std::max(next_tick_ + period, now) : now + period;
  timer_.expires_at(next_tick_);
  timer_.async_wait([this](std::error_code ec) {
    if (ec) return;
    armed_ = false;
    tick();
  });
}

void watchdog::expire_unconfirmed(time_point now) {
  std::vector<hold_key> expired;
  for (const auto& [id, h] : holds_) {
    if (h.renew != nullptr && now >= h.confirmed_at + h.lease) expired.push_back(id);
  }
  for (const auto& id : expired) lost(id, errc::renewal_failed);
}

void watchdog::tick() {
  const auto now = std::chrono::steady_clock::now();
  expire_unconfirmed(now);
  // Group by script, and in Cluster by slot too: one script call may only touch one slot.
  std::map<std::pair<const exec::script*, std::uint16_t>, std::vector<renewal_target>> groups;
  for (const auto& [id, h] : holds_) {
    if (h.renew == nullptr) continue;
    const std::uint16_t slot = options_.group_by_slot ? topology::slot_of(id.first) : 0;
    groups[{h.renew, slot}].push_back({id, h.generation, h.renew_arg});
  }
  for (auto& [group, targets] : groups) {
    for (std::size_t from = 0; from < targets.size(); from += options_.batch) {
      auto to = std::min(targets.size(), from + options_.batch);
      renew(*group.first,
            std::vector<renewal_target>(targets.begin() + from, targets.begin() + to));
    }
  }
  if (!groups.empty()) arm(/*after_tick=*/true);
}

void watchdog::renew(const exec::script& script, std::vector<renewal_target> batch) {
  std::vector<std::string> keys, args;
  keys.reserve(batch.size());
  args.reserve(batch.size() + 1);
  args.push_back(std::to_string(options_.lease.count()));
  for (const auto& t : batch) {
    keys.push_back(t.id.first);
    args.push_back(t.renew_arg);
  }
  ++renewals_sent_;
  const auto sent_at = std::chrono::steady_clock::now();
  // Renewal is idempotent (PEXPIRE), so the executor may resend it after a lost connection.
  executor_.eval(
      script, std::move(keys), std::move(args),
      [this, batch = std::move(batch), sent_at](std::error_code ec, resp::reply r) {
        if (ec) {
          // Kept in the table: the next tick tries again while the lease lasts.
          log(log_level::warning, "lock renewal failed: " + r.str);
          return;
        }
        for (std::size_t i = 0; i < batch.size() && i < r.elements.size(); ++i) {
          auto it = holds_.find(batch[i].id);
          // Released or re-acquired since the renewal went out: not ours to judge.
          if (it == holds_.end() || it->second.generation != batch[i].generation) continue;
          if (r.elements[i].integer != 0) {
            it->second.confirmed_at = std::max(it->second.confirmed_at, sent_at);
          } else {
            lost(batch[i].id, errc::lock_lost);
          }
        }
      },
      /*idempotent=*/true);
}

void watchdog::lost(const hold_key& id, errc why) {
  auto it = holds_.find(id);
  auto on_lost = std::move(it->second.on_lost);
  const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - it->second.confirmed_at);
  drop(it);
  lost_.insert(id);
  log(log_level::warning,
      "lock '" + id.first + "' held by " + id.second +
          (why == errc::lock_lost ? " was lost: the hold is gone from Redis (expired or deleted)"
                                  : " was lost: no renewal reached Redis for a whole lease") +
          "; last confirmed " + std::to_string(since.count()) + " ms ago");
  const std::error_code ec = make_error_code(why);
  if (on_lost) on_lost(ec);
  if (options_.on_lost) options_.on_lost(id.first, id.second, ec);
}

}  // namespace relock::renewal
