// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::red_lock: a lock held by a quorum of independent Redis masters (Redisson's
/// RedissonRedLock, the Redlock algorithm).
///
/// Members are relock::mutex handles on the same name, each on a client of its own server: n
/// servers (n odd, at least 3) that share nothing, no replication, no cluster. An acquire asks
/// every member at once, each with a time budget of max(remaining wait / n, 1 ms), and holds the
/// lock when n/2 + 1 of them granted it in time: the result says how long the hold is valid,
/// the lease minus the time the attempt took minus a clock-drift allowance (lease x
/// drift_factor + 2 ms). When too few granted it, what was granted goes back and it tries again
/// while the wait lasts. It never returns holding no quorum, and never fails holding a member.
/// Unlock releases every member and reports those it could not reach (unlock_members), each by
/// its index and server (its members share one name).
///
/// What it does and does not guarantee (see the README, "red_lock"): one server down, stopped or
/// restarted costs one vote, not the lock; so does one that did not answer when its client was
/// to be made (redlock_options::unreached). But the guarantee rests on timing: a holder that
/// pauses (GC, swap, SIGSTOP) past its validity, a server whose clock jumps, or a server that
/// restarts without persistence and forgets a grant can let two holders overlap. A resource
/// that can check a token should be guarded by the fenced lock instead (fenced_lock.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <relock/detail/export.hpp>
#include <relock/lock.hpp>
#include <relock/lock_set.hpp>

namespace relock {

/// How a red_lock judges its servers.
struct redlock_options {
  /// The servers' clocks may run this much faster than ours, as a fraction of the lease.
  double drift_factor = 0.01;
  /// Servers of this red_lock that have no member because their client could not be made (the
  /// server did not answer when it started: a relock::client connects when constructed), each
  /// by a label for messages, such as its URL without the password. Each counts among the n
  /// servers as a vote never granted, as a member whose server is away does: the quorum stays
  /// n/2 + 1 of all of them, and with fewer members than that every acquire fails at once with
  /// errc::connection, naming them. Nothing answered for them, so they cannot be told apart
  /// from the members' servers; make their clients again to give them back their votes.
  std::vector<std::string> unreached{};
};

/// An acquire's outcome with the validity the algorithm promises.
struct redlock_result {
  /// A quorum granted it in time.
  bool acquired = false;
  std::chrono::milliseconds validity{0};  ///< lease - elapsed - drift, when acquired
  std::size_t members_held = 0;           ///< at least the quorum, when acquired
};

/// \copydoc red_lock.hpp
class RELOCK_API red_lock : public lock_set {
 public:
  /// Throws errc::invalid_argument unless there are an odd number of members, at least 3, on
  /// distinct servers, and the drift factor is in [0, 1). Servers are told apart by what they
  /// say of themselves when a client starts (INFO's run_id), not by their address: two clients
  /// of one server (127.0.0.1:6379 and localhost:6379, or two databases) would be two votes of
  /// one server, and the message names both members and the server. All the clients of one
  /// Redis Cluster are one server: a name lives on one of its masters whichever seed was given.
  /// The count includes options.unreached; at least one member is needed.
  explicit red_lock(std::vector<mutex> members, redlock_options options = {});

  /// n/2 + 1 of the n servers, those never reached (options.unreached) included.
  std::size_t quorum() const { return lock_set::quorum(); }

  /// Waits options.wait (for ever when empty), with options.lease (the watchdog when empty)
  /// and options.stop; throws relock::error on failure. The calling thread owns the hold.
  redlock_result acquire(lock_options options);

  /// void(std::error_code, redlock_result): as acquire, waits options.wait (for ever when
  /// empty); a wait that ran out is redlock_result::acquired false, not an error.
  template <class Token>
  auto async_acquire(owner o, lock_options options, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, redlock_result)>(
        [self = *this](auto handler, owner who, lock_options opts) mutable {
          auto c = detail::erase_cancellable<redlock_result>(std::move(handler), self.io(),
                                                             std::move(opts.stop));
          opts.stop = std::move(c.stop);
          auto done = std::move(c.done);
          self.start_acquire(
              who, std::move(opts), true,
              [done = std::move(done)](std::error_code ec, detail::lock_set_result r) mutable {
                done(ec, r.detail, redlock_result{r.acquired, r.validity, r.held});
              });
        },
        token, o, std::move(options));
  }
};

}  // namespace relock
