// SPDX-License-Identifier: Apache-2.0
#include "renewal/watchdog.hpp"

#include <relock/observer.hpp>

#include <relock/errors.hpp>

namespace relock::renewal {

watchdog::watchdog(exec::executor& executor, pubsub::channels& subscriber, watchdog_options options)
    : executor_(executor),
      subscriber_(subscriber),
      options_(std::move(options)),
      timer_(executor.io()),
      deadline_timer_(executor.io()) {
  table_.on_drop = [this](hold_table::hold& h) {
    if (h.listener) subscriber_.remove(h.listener);
  };
}

void watchdog::log(log_level level, const std::string& text) const {
  if (options_.log) options_.log(level, text);
}

void watchdog::held(grant g) {
  const std::string& key = g.key;
  const std::string& field = g.field;
  const std::string& listen_on = g.listen_on;
  const renewer* renew = g.renew;
  auto& h = table_.held(key, field, std::move(g.owner), g.lease, renew, std::move(g.on_lost),
                        g.sent_at, g.token, g.holds);
  if (!listen_on.empty() && !h.listener) {
    const hold_table::hold_key id{key, field};
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
  if (renew != nullptr) {
    arm(/*after_tick=*/false);
    arm_deadline();
    // An acquire answered a third of a lease after it was sent (a slow or busy server) would
    // reach its validity deadline before the next tick could confirm it: renew it alone, now.
    if (std::chrono::steady_clock::now() - g.sent_at >= options_.lease / 3) {
      if (auto call = table_.renewal_of({key, field}, options_.lease)) send(std::move(*call));
    }
  }
}

void watchdog::check_still_held(const hold_table::hold_key& id, std::uint64_t generation) {
  resp::request hexists;
  hexists.push({"HEXISTS", id.first, id.second});
  executor_.run(
      id.first, std::move(hexists), [this, id, generation](std::error_code ec, resp::reply r) {
        if (ec) return;
        auto lost =
            table_.checked(id, generation, r.integer != 0, std::chrono::steady_clock::now());
        if (lost) report(*lost);
      });
}

void watchdog::stop() {
  timer_.cancel();
  armed_ = false;
  deadline_timer_.cancel();
  deadline_armed_.reset();
}

void watchdog::renew_now() {
  if (table_.size() == 0) return;
  timer_.cancel();
  armed_ = false;
  next_tick_ = std::chrono::steady_clock::now();
  tick();
}

void watchdog::arm_deadline() {
  const auto next = table_.next_deadline();
  if (!next || (deadline_armed_ && *deadline_armed_ <= *next)) return;
  deadline_armed_ = *next;
  deadline_timer_.expires_at(*next);
  deadline_timer_.async_wait([this](std::error_code ec) {
    if (ec) return;  // replaced by an earlier deadline, or stopped
    deadline_armed_.reset();
    expire_due();
  });
}

// Renewals usually moved the deadline on since the timer was set: then this only re-arms.
void watchdog::expire_due() {
  for (const auto& lost : table_.expire_unconfirmed(std::chrono::steady_clock::now())) {
    report(lost);
  }
  arm_deadline();
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

void watchdog::tick() {
  expire_due();
  auto calls = table_.renewals(options_.lease, options_.batch, options_.group_by_slot);
  for (auto& call : calls) send(std::move(call));
  if (!calls.empty()) arm(/*after_tick=*/true);
}

void watchdog::release(const std::string& key, const std::string& field,
                       detail::unique_function<void()> send) {
  const hold_table::key_view id{key, field};
  table_.release_sent(id);
  if (!table_.renewal_in_flight(id)) return send();
  waiting_releases_[hold_table::hold_key{key, field}].push_back(std::move(send));
}

void watchdog::send(hold_table::call call) {
  ++renewals_sent_;
  const auto sent_at = std::chrono::steady_clock::now();
  table_.renewal_sent(call.targets);
  // Renewal is idempotent (PEXPIRE), so the executor may resend it after a lost connection.
  executor_.eval(
      *call.script, std::move(call.keys), std::move(call.args),
      [this, targets = std::move(call.targets), sent_at](std::error_code ec, resp::reply r) {
        // Releases that waited for this call go now, after the table has judged it.
        struct release_waiters {
          watchdog& w;
          const std::vector<hold_table::target>& targets;
          ~release_waiters() {
            for (const auto& id : w.table_.renewal_answered(targets)) {
              auto it = w.waiting_releases_.find(id);
              if (it == w.waiting_releases_.end()) continue;
              auto sends = std::move(it->second);
              w.waiting_releases_.erase(it);
              for (auto& send : sends) send();
            }
          }
        } after{*this, targets};
        if (auto* o = options_.observer) {
          o->on_renewal({.holds = targets.size(),
                         .error = ec,
                         .latency = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now() - sent_at)});
        }
        if (ec) {
          // Kept in the table: the next tick tries again while the lease lasts.
          log(log_level::warning, "lock renewal failed: " + (r.is_error() ? r.str : ec.message()));
          return;
        }
        for (const auto& lost :
             table_.renewed(targets, r, sent_at, std::chrono::steady_clock::now())) {
          report(lost);
        }
      },
      {.idempotent = true});
}

void watchdog::report(const hold_table::lost_hold& lost) {
  log(log_level::warning, "lock '" + lost.id.first + "' held by " + lost.id.second +
                              (lost.why == errc::lock_lost
                                   ? " was lost: the hold is gone from Redis (expired or deleted)"
                                   : " was lost: no renewal reached Redis before its validity "
                                     "deadline (lease minus the clock-drift margin)") +
                              "; last confirmed " + std::to_string(lost.since_confirmed.count()) +
                              " ms ago");
  const std::error_code ec = make_error_code(lost.why);
  if (lost.on_lost) lost.on_lost(ec);
  if (options_.on_lost) options_.on_lost(lost.id.first, lost.id.second, ec);
  if (auto* o = options_.observer) o->on_loss({lost.id.first, lost.id.second, ec});
}

}  // namespace relock::renewal
