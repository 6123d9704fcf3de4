// SPDX-License-Identifier: Apache-2.0
// The watchdog's table of holds, with no I/O and no clock of its own: the watchdog (watchdog.hpp)
// brings the time, sends the calls this table plans and feeds their replies back.
//
// A hold is one (lock key, owner field) that this client took, counted per re-entry. One that
// renews carries its renewer: the script and what the hold adds to a batch call of it (its keys,
// all in the lock key's slot, and its arguments), so a hold that touches several keys (a read
// hold: the hash and one timeout key per re-entry) names them all, and the calls are built from a
// snapshot of the table (redisson/redisson#6831 built them from a set that changed under it).
//
// A hold leaves the table when it is fully released, forgotten, or lost; a lost one is
// remembered until its owner's next release, which then reports errc::lock_lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <relock/errors.hpp>

#include "containers/spare_nodes.hpp"
#include "exec/script.hpp"
#include "pubsub/subscriber.hpp"
#include "resp/reply.hpp"

namespace relock::renewal {

// How one kind renews a hold. `append` adds the hold's keys and arguments to a batch call of
// `script`, whose reply has one element per hold: non-zero renewed, 0 gone.
struct renewer {
  const exec::script& script;
  void (*append)(std::string_view key, std::string_view owner, std::int64_t holds,
                 std::vector<std::string>& keys, std::vector<std::string>& args);
};

class hold_table {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using hold_key = std::pair<std::string, std::string>;  // lock key, owner field
  // The same, borrowed: what a lookup takes, so it builds no strings (every acquire and release
  // looks its hold up several times).
  using key_view = std::pair<std::string_view, std::string_view>;
  // Orders hold_key and key_view alike (as std::string orders), for the tables' lookups.
  struct key_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return key_view(a.first, a.second) < key_view(b.first, b.second);
    }
  };

  struct hold {
    std::chrono::milliseconds lease{0};
    const renewer* renew = nullptr;  // null: a fixed lease, never renewed
    std::string owner;               // what the renewer is told, e.g. without ":write"
    std::int64_t count = 0;          // re-entries by this client
    std::function<void(std::error_code)> on_lost;
    std::uint64_t generation = 0;  // a new one each time the hold is taken afresh
    // When a renewal (or the acquire) that reached the server was sent: the key lives at least
    // until confirmed_at + lease.
    time_point confirmed_at{};
    // Until when the hold is certainly ours: confirmed_at + lease - validity_margin(lease).
    time_point valid_until{};
    pubsub::listener_ptr listener;  // the watchdog's business (listen_for_loss)
    std::string first_token;        // the token of the outermost acquisition (a fenced lock's)
    time_point taken_at{};          // when the outermost acquisition was sent (hold times)
  };

  struct target {
    hold_key id;
    std::uint64_t generation;
  };
  // One script call: ARGV[1] the lease, then what each target's renewer appended.
  struct call {
    const exec::script* script;
    std::vector<std::string> keys;
    std::vector<std::string> args;
    std::vector<target> targets;
  };

  struct lost_hold {
    hold_key id;
    errc why;  // lock_lost: found gone; renewal_failed: no renewal reached Redis for a lease
    std::function<void(std::error_code)> on_lost;
    std::chrono::milliseconds since_confirmed;
  };

  struct release_plan {
    bool known = false;  // we recorded this hold
    bool lost = false;   // it was found gone: do not release, report lock_lost
    std::chrono::milliseconds lease{0};
    std::optional<time_point> taken_at{};  // known: when the outermost acquisition was sent
  };

  // Runs for every hold that leaves the table, so its owner can let go of what it attached.
  std::function<void(hold&)> on_drop;

  // How much of a lease the holder does not count on: the server's clock may run faster than
  // ours (1% of the lease, as the red_lock algorithm allows) plus 2 ms for the expiry's rounding.
  static std::chrono::milliseconds validity_margin(std::chrono::milliseconds lease) {
    return lease / 100 + std::chrono::milliseconds(2);
  }

  // One more re-entry (the first takes the hold afresh, and keeps its `token`). The acquire was
  // sent at `sent_at`: it ran on the server after that, so the key lives at least a lease from
  // then. `holds`, when the server said (else 0), is the owner's count after it: 1 takes
  // the hold afresh whatever the table remembers (a fixed-lease hold that expired unseen).
  hold& held(const std::string& key, const std::string& field, std::string owner,
             std::chrono::milliseconds lease, const renewer* renew,
             std::function<void(std::error_code)> on_lost, time_point sent_at,
             std::string_view token = {}, std::int64_t holds = 0);
  // Before a release goes out: one re-entry fewer, the hold forgotten at zero. An unknown hold
  // plans `unknown_lease` to restore.
  release_plan releasing(const std::string& key, const std::string& field,
                         std::chrono::milliseconds unknown_lease);
  void forget(const std::string& key, const std::string& field);

  // The renewal calls due now, built from the table as it is: grouped by script (and by slot,
  // when asked: one call may only touch one slot in Cluster), `batch` holds per call at most.
  // The renewal call of one hold alone; nullopt when it is not there to renew.
  std::optional<call> renewal_of(key_view id, std::chrono::milliseconds lease) const;
  std::vector<call> renewals(std::chrono::milliseconds lease, std::size_t batch,
                             bool group_by_slot) const;
  // A renewal call's reply (sent at `sent_at`): confirms the holds it renewed, loses those it
  // found gone. Holds released or taken afresh since it went out are not judged by it.
  std::vector<lost_hold> renewed(const std::vector<target>& targets, const resp::reply& reply,
                                 time_point sent_at, time_point now);
  // Renewing holds past their validity deadline (no renewal confirmed in time): their keys may
  // have expired, so they are lost now, before anyone else can take the lock.
  std::vector<lost_hold> expire_unconfirmed(time_point now);
  // The earliest validity deadline of a renewing hold; nullopt when none renews.
  std::optional<time_point> next_deadline() const;
  // A check of one hold (HEXISTS) answered `exists`.
  std::optional<lost_hold> checked(const hold_key& id, std::uint64_t generation, bool exists,
                                   time_point now);

  // Releases and renewals on their way, so neither overtakes the other (Redisson #7272's zombie
  // renewal): a hold with a release in flight is not renewed, and a release waits while a
  // renewal call that names its hold is out (a call may travel on another connection than the
  // release, and be resent after NOSCRIPT).
  void release_sent(key_view id);
  void release_answered(key_view id);
  void renewal_sent(const std::vector<target>& targets);
  // Returns the holds whose last renewal call in flight this was.
  std::vector<hold_key> renewal_answered(const std::vector<target>& targets);
  bool renewal_in_flight(key_view id) const { return renewing_.find(id) != renewing_.end(); }

  const hold* find(const std::string& key, const std::string& field) const;
  std::size_t size() const { return holds_.size(); }

 private:
  using hold_map = std::map<hold_key, hold, key_less>;
  using count_map = std::map<hold_key, int, key_less>;
  lost_hold lose(hold_map::iterator it, errc why, time_point now);
  void drop(hold_map::iterator it);
  // Map nodes of holds and release counts that left are kept (a few) for the next ones: a lock
  // taken and released over and over reuses one node and its key's strings.
  void keep_spare(hold_map::node_type node);
  void count_up(count_map& counts, key_view id);
  bool count_down(count_map& counts, key_view id);

  hold_map holds_;
  std::set<hold_key, key_less> lost_;
  count_map releasing_;
  count_map renewing_;
  containers::spare_nodes<hold_map> spare_holds_;
  containers::spare_nodes<count_map> spare_counts_;
  std::uint64_t next_generation_ = 1;
};

}  // namespace relock::renewal
