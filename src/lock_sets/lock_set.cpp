// SPDX-License-Identifier: Apache-2.0
#include <relock/lock_set.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "client_core.hpp"
#include "lock_sets/lock_set_state.hpp"
#include "lock_sets/member_address.hpp"
#include "lock_sets/member_run.hpp"
#include "lock_sets/multi_acquire_fsm.hpp"
#include "lock_sets/quorum_fsm.hpp"
#include "locks/lock_access.hpp"
#include "net/endpoint.hpp"
#include "waiting/blocking_call.hpp"

namespace relock::detail::lock_sets {
namespace {

const std::string& server_of(const mutex& l) { return locks::lock_access::core(l).settings().url; }

// The member's server as the server says (client_core::server_id): equal for two clients of
// one server, however its address was spelled.
const std::string& server_id_of(const mutex& l) { return locks::lock_access::core(l).server_id(); }

// The member's database (0 in a cluster).
int db_of(const mutex& l) { return net::parse_target(server_of(l)).nodes.front().db; }

// Hears one member's loss and tells the set's on_lost once, when the set is lost with it: at
// the first loss for a multi-lock, when fewer than a quorum remain for a red_lock.
std::function<void(std::error_code)> set_loss(std::function<void(std::error_code)> on_lost,
                                              std::size_t may_lose) {
  if (!on_lost) return {};
  auto lost = std::make_shared<std::atomic<std::size_t>>(0);
  return [on_lost = std::move(on_lost), lost, may_lose](std::error_code ec) {
    if (lost->fetch_add(1) == may_lose) on_lost(ec);
  };
}

// What an unlock of a set comes to, from its members' failures: not_owner when no member was
// held; lock_lost when fewer than `quorum` were still held (a multi-lock: all of them); else
// the first member that could not be reached; else nothing (a red_lock member never granted is
// no failure of the set).
std::error_code set_unlock_outcome(const std::vector<member_failure>& failures, std::size_t members,
                                   std::size_t quorum) {
  std::size_t gone = 0, not_owner = 0;
  std::error_code away;
  for (const auto& f : failures) {
    if (f.ec == errc::not_owner || f.ec == errc::lock_lost) {
      ++gone;
      if (f.ec == errc::not_owner) ++not_owner;
    } else if (!away) {
      away = f.ec;
    }
  }
  const std::size_t released = members - failures.size();
  if (released == 0 && not_owner == members) return errc::not_owner;
  if (released < quorum && gone > 0) return errc::lock_lost;
  return away;
}

// Gives every member back at once and collects what failed.
class release_all : public std::enable_shared_from_this<release_all> {
 public:
  using done_fn = answer<std::vector<member_failure>>;
  release_all(std::vector<mutex> members, std::size_t quorum, done_fn done)
      : members_(std::move(members)),
        quorum_(quorum),
        left_(members_.size()),
        done_(std::move(done)) {}

  void start(owner who) {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      locks::lock_access::release(
          members_[i], who, [self = shared_from_this(), i](std::error_code ec, std::string detail) {
            self->heard(i, ec, std::move(detail));
          });
    }
  }

 private:
  void heard(std::size_t i, std::error_code ec, std::string detail) {
    std::unique_lock guard(mutex_);
    if (ec) failures_.push_back({members_[i].name(), ec, std::move(detail), i, {}});
    if (--left_ > 0) return;
    auto failures = std::move(failures_);
    guard.unlock();
    std::sort(failures.begin(), failures.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    for (auto& f : failures) f.server = member_address(members_[f.index]);
    const auto outcome = set_unlock_outcome(failures, members_.size(), quorum_);
    std::string said;  // every member that failed, in words
    for (const auto& f : failures) {
      said += (said.empty() ? "" : "; ") + member_label(members_[f.index], f.index) + ": " +
              (f.detail.empty() ? f.ec.message() : f.detail);
    }
    done_(outcome, std::move(said), std::move(failures));
  }

  std::vector<mutex> members_;
  std::size_t quorum_;
  std::mutex mutex_;
  std::size_t left_;
  std::vector<member_failure> failures_;
  done_fn done_;
};

// Orders the members (multi-lock) or checks they are on distinct servers (red_lock).
void check_and_order(lock_set_state& state) {
  auto& members = state.members;
  const auto& rule = state.rule;
  const std::string what = rule.what;
  if (members.empty()) throw error(errc::invalid_argument, what + ": no member locks");
  if (!rule.quorum) {
    // One key of one server and database, by the server's own id: two clients of one server
    // are two owners of the key, and the set would wait on itself. (A red_lock refuses any two
    // members on one server, below.)
    std::map<std::tuple<std::string, std::string, int>, std::size_t> seen;  // -> first member
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& m = members[i];
      const auto [first, inserted] =
          seen.emplace(std::tuple{m.key(), server_id_of(m), db_of(m)}, i);
      if (inserted) continue;
      const auto& a = members[first->second];
      throw error(errc::invalid_argument, what + ": " + member_label(a, first->second) + " and " +
                                              member_label(m, i) + " are one key of one server");
    }
    // The canonical order: by key, then server (its own id, not its address) and database.
    // Every process sorts the same members the same way whatever order they were given in and
    // however it spells the servers' addresses.
    std::stable_sort(members.begin(), members.end(), [](const mutex& a, const mutex& b) {
      return std::tuple{a.key(), server_id_of(a), db_of(a)} <
             std::tuple{b.key(), server_id_of(b), db_of(b)};
    });
    return;
  }
  // Those never reached count: they are servers of the set, each a vote never granted.
  const auto voters = members.size() + rule.unreached.size();
  if (voters < 3 || voters % 2 == 0) {
    throw error(errc::invalid_argument,
                what + ": needs an odd number of members, at least 3, one per server (got " +
                    std::to_string(voters) + ")");
  }
  // One server, one vote: told apart by the server itself, so that 127.0.0.1:P and
  // localhost:P are one server, and a quorum is never two votes of one.
  std::map<std::string, std::size_t> servers;  // server id -> first member on it
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto [first, inserted] = servers.emplace(server_id_of(members[i]), i);
    if (inserted) continue;
    const auto& a = members[first->second];
    const auto& b = members[i];
    throw error(errc::invalid_argument, what + ": " + member_label(a, first->second) + " and " +
                                            member_label(b, i) + " are on the same server (" +
                                            first->first +
                                            "); each must be on an independent server");
  }
  if (!(rule.drift_factor >= 0 && rule.drift_factor < 1)) {
    throw error(errc::invalid_argument, what + ": the drift factor must be in [0, 1)");
  }
}

}  // namespace

}  // namespace relock::detail::lock_sets

namespace relock {

using namespace detail;  // the lock sets are built from the other folders' parts
using namespace detail::lock_sets;

lock_set::lock_set(std::vector<mutex> members, const lock_set_rule& how) {
  auto state = std::make_shared<lock_set_state>(lock_set_state{std::move(members), how});
  check_and_order(*state);
  state_ = std::move(state);
}

const std::vector<mutex>& lock_set::members() const { return state_->members; }

std::size_t lock_set::quorum() const {
  const auto n = state_->members.size();
  return state_->rule.quorum ? (n + state_->rule.unreached.size()) / 2 + 1 : n;
}

asio::io_context& lock_set::io() const {
  return io_of(locks::lock_access::core(state_->members.front()));
}

void lock_set::start_acquire(owner who, lock_options options, bool empty_wait_is_forever,
                             acquire_done done) {
  if ((options.lease && options.lease->count() <= 0) ||
      (options.wait && options.wait->count() < 0)) {
    return done(errc::invalid_argument, {.detail = "a lease must be > 0 and a wait >= 0"});
  }
  const auto now = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.wait) deadline = now + *options.wait;
  const bool try_once = !options.wait && !empty_wait_is_forever;
  // With fewer members than a quorum (servers never reached) nothing is ever held.
  options.on_lost = set_loss(std::move(options.on_lost),
                             state_->members.size() - std::min(state_->members.size(), quorum()));
  if (!state_->rule.quorum) {
    std::optional<std::chrono::milliseconds> cap;
    if (options.lease) cap = std::max(*options.lease / 2, std::chrono::milliseconds(1));
    auto run = std::make_shared<member_run<multi_acquire_fsm>>(
        state_->members, who, std::move(options),
        multi_acquire_fsm(state_->members.size(), deadline, try_once, cap), std::move(done));
    return run->start();
  }
  quorum_fsm::settings s;
  s.members = state_->members.size();
  s.unreached = state_->rule.unreached;
  s.deadline = deadline;
  s.try_once = try_once;
  s.lease = options.lease.value_or(
      locks::lock_access::core(state_->members.front()).settings().watchdog_lease);
  s.drift_factor = state_->rule.drift_factor;
  auto run = std::make_shared<member_run<quorum_fsm>>(state_->members, who, std::move(options),
                                                      quorum_fsm(s), std::move(done));
  run->start();
}

void lock_set::start_release(owner who, release_done done) {
  std::make_shared<release_all>(state_->members, quorum(), std::move(done))->start(who);
}

detail::lock_set_result lock_set::acquire_blocking(owner who, lock_options options,
                                                   bool empty_wait_is_forever) {
  for (const auto& m : state_->members)
    waiting::refuse_io_thread(locks::lock_access::core(m), state_->rule.what);
  auto [ec, result] = waiting::wait_for<std::error_code, lock_set_result>([&](auto done) {
    start_acquire(who, std::move(options), empty_wait_is_forever, std::move(done));
  });
  if (ec) throw error(ec, std::string(state_->rule.what) + ": " + result.detail);
  return std::move(result);
}

std::vector<member_failure> lock_set::unlock_members() noexcept {
  try {
    for (std::size_t i = 0; i < state_->members.size(); ++i) {
      const auto& m = state_->members[i];
      if (locks::lock_access::core(m).on_io_thread()) {
        return {member_failure{m.name(), errc::would_deadlock,
                               "unlock() blocks, and was called on relock's I/O thread; use "
                               "async_unlock there",
                               i, member_address(m)}};
      }
    }
    auto [ec, said, failures] =
        waiting::wait_for<std::error_code, std::string, std::vector<member_failure>>(
            [&](auto done) { start_release(owner::current_thread(), std::move(done)); });
    return std::move(failures);
  } catch (const std::exception& e) {  // allocation failure: still never throw from here
    return {member_failure{state_->members.front().name(), errc::connection, e.what(), 0, {}}};
  }
}

void lock_set::unlock() noexcept { unlock_reporting(nullptr); }

void lock_set::unlock(std::error_code& ec) noexcept { unlock_reporting(&ec); }

void lock_set::unlock_reporting(std::error_code* out) noexcept {
  const auto failures = unlock_members();
  const auto outcome = set_unlock_outcome(failures, state_->members.size(), quorum());
  if (out != nullptr) *out = outcome;
  if (out != nullptr || !outcome) return;
  // Each failure to the client of the member that failed (a red_lock's members share a name).
  for (const auto& f : failures) {
    if (f.index >= state_->members.size()) continue;
    const auto& m = state_->members[f.index];
    const auto& core = locks::lock_access::core(m);
    core.log(log_level::error, std::string(state_->rule.what) + " unlock failed: member " +
                                   std::to_string(f.index) + " on " + f.server + ": " + f.detail);
    if (const auto& report = core.settings().on_unlock_error) report(m.key(), f.ec, f.detail);
  }
}

std::optional<std::chrono::steady_clock::time_point> lock_set::valid_until() const {
  return valid_until(owner::current_thread());
}

std::optional<std::chrono::steady_clock::time_point> lock_set::valid_until(owner o) const {
  std::vector<std::chrono::steady_clock::time_point> until;
  for (const auto& m : state_->members) {
    if (auto t = m.valid_until(o)) until.push_back(*t);
  }
  if (until.size() < quorum()) return std::nullopt;
  // The quorum-th latest: the moment fewer than a quorum of member holds remain valid.
  std::sort(until.begin(), until.end(), std::greater<>());
  return until[quorum() - 1];
}

}  // namespace relock
