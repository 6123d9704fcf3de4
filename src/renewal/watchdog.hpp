// SPDX-License-Identifier: Apache-2.0
// The watchdog: one timer and one table of the holds this client keeps alive.
//
// Every lease/3 it renews all watchdog-held locks, grouped by slot into script calls of up to
// `batch` holds, all sent at once (pipelined); the table (hold_table.hpp) plans the calls and
// judges their replies. A renewal that finds the hold gone marks it lost:
// it leaves the table, its on_lost and the client's on_lock_lost hear of it, and its owner's
// next release reports errc::lock_lost. So does a hold whose renewals have all failed (server
// unreachable) until its validity deadline (hold_table::hold::valid_until): a second timer fires
// at the earliest deadline, so the loss is reported by then, before the key can expire on the
// server and another client take the lock.
//
// Order matters (Redisson #7272 came from the opposite): a hold is recorded before the acquire's
// completion reaches the caller, and forgotten before the release script goes out, so a
// released key is never renewed again; and a release goes out only once no renewal call naming
// its hold is on its way (release()), while a hold with a release in flight is not renewed. A
// renewal reply for a hold that was forgotten meanwhile is ignored (holds carry a generation).
//
// I/O thread only. Holds with a fixed lease are recorded too (their lease is restored on a
// partial release) but never renewed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <asio/steady_timer.hpp>
#include <relock/config.hpp>
#include <relock/detail/unique_function.hpp>
#include <relock/errors.hpp>

#include "exec/executor.hpp"
#include "pubsub/subscriber.hpp"
#include "renewal/hold_table.hpp"

namespace relock::renewal {

struct watchdog_options {
  std::chrono::milliseconds lease{30'000};
  std::size_t batch = 100;
  // A script may touch keys of one slot only in Cluster; a single server takes any keys in one
  // call, and grouping there would split 10,000 holds into thousands of near-empty batches.
  bool group_by_slot = false;
  std::function<void(std::string_view key, std::string_view field, std::error_code why)> on_lost;
  std::function<void(log_level, std::string_view)> log;
  relock::observer* observer = nullptr;  // hears renewals and losses; the client owns it
};

class watchdog {
 public:
  using release_plan = hold_table::release_plan;

  watchdog(exec::executor& executor, pubsub::channels& subscriber, watchdog_options options);

  // A hold an acquire was granted.
  struct grant {
    std::string key;
    std::string field;
    std::string owner;  // what `renew` is told for the hold
    std::chrono::milliseconds lease{0};
    const renewer* renew = nullptr;  // null: a fixed lease, never renewed
    std::function<void(std::error_code)> on_lost{};
    std::chrono::steady_clock::time_point sent_at{};  // when the acquire was sent
    // A channel whose every message (and every resubscription) checks the hold at once, so a
    // hold taken away is lost within a round trip; empty: none.
    std::string listen_on{};
    std::string token{};
    std::int64_t holds = 0;  // the owner's holds after it, when the reply said (0: unknown)
  };
  void held(grant g);

  // Call before sending a release: counts one hold down, and forgets the hold at zero.
  release_plan releasing(const std::string& key, const std::string& field) {
    return table_.releasing(key, field, options_.lease);
  }
  // Sends a release of the hold through `send`: at once, or once the renewal call that names
  // the hold and is on its way has been answered, so no renewal reaches Redis after it. Until
  // release_answered, the hold is not renewed.
  void release(const std::string& key, const std::string& field,
               detail::unique_function<void()> send);
  void release_answered(const std::string& key, const std::string& field) {
    table_.release_answered({key, field});
  }
  // The server says the hold is entirely gone (fully released or force-released).
  void forget(const std::string& key, const std::string& field) { table_.forget(key, field); }

  bool held_by(const std::string& key, const std::string& field) const {
    return table_.find(key, field) != nullptr;
  }
  // The token of the hold's outermost acquisition; empty when none is recorded.
  std::string first_token(const std::string& key, const std::string& field) const {
    const auto* h = table_.find(key, field);
    return h ? h->first_token : std::string();
  }
  // Until when the hold is certainly valid; nullopt when none is recorded.
  std::optional<std::chrono::steady_clock::time_point> valid_until(const std::string& key,
                                                                   const std::string& field) const {
    const auto* h = table_.find(key, field);
    if (h == nullptr) return std::nullopt;
    return h->valid_until;
  }
  std::size_t holds() const { return table_.size(); }
  // Renews every hold now, then on the usual schedule (after the master moved).
  void renew_now();
  std::size_t renewals_sent() const { return renewals_sent_; }
  void stop();

 private:
  using time_point = std::chrono::steady_clock::time_point;

  void arm(bool after_tick);
  void tick();
  // Arms the deadline timer for the earliest validity deadline, if it is not armed earlier.
  void arm_deadline();
  void expire_due();
  void send(hold_table::call call);
  void check_still_held(const hold_table::hold_key& id, std::uint64_t generation);
  void report(const hold_table::lost_hold& lost);
  void log(log_level level, const std::string& text) const;

  exec::executor& executor_;
  pubsub::channels& subscriber_;
  watchdog_options options_;
  asio::steady_timer timer_;
  bool armed_ = false;
  time_point next_tick_{};
  asio::steady_timer deadline_timer_;
  std::optional<time_point> deadline_armed_;
  std::size_t renewals_sent_ = 0;
  hold_table table_;
  std::map<hold_table::hold_key, std::vector<detail::unique_function<void()>>> waiting_releases_;
};

}  // namespace relock::renewal
