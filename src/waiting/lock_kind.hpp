// SPDX-License-Identifier: Apache-2.0
// What a kind is, in parts that the one waiting loop (acquire_op + acquire_fsm), the one release
// path (release_op) and the watchdog read. Not every kind is a lock, so a kind takes only the
// parts it has:
//   - grant_kind, every kind: how a try is made and how its reply reads, where its waiters listen
//     and how many a message wakes (or that they back off instead), what a wait that ends
//     without the grant leaves behind (give-up), and how a lost try of an ownerless kind is
//     undone (take-back);
//   - release_kind: how a grant goes back under an unlock latch (data-layout §1);
//   - hold_kind, the release of a grant that is an owner's hold: its hash field, and how the
//     watchdog renews it (renewal::renewer: each hold names all the keys it touches);
//   - lock_kind, what relock::mutex takes: a grant that is a hold, which anyone may also break
//     (force_unlock).
// So a lock is a lock_kind (lock_kind.cpp: the reentrant lock and its non-reentrant variant;
// rwlock_kind.cpp: the two sides of the read-write lock; fair_lock_kind.cpp, fenced_lock_kind.cpp,
// spin_lock_kind.cpp). The synchronizers (sync_kinds.hpp) take less: a permit-expirable
// semaphore's permit is a grant and a hold whose owner is the permit's id; a plain semaphore's
// permits are a grant nobody holds and a release anyone may make; a latch's await is a grant
// alone. A kind is a constant built from constant parts, initialised before any code runs, so a
// handle made in a static initialiser finds it whole; the loop keeps a pointer to it, nothing
// more. A new kind is its scripts plus one small file that builds its parts, and for a lock a
// thin public header whose handles are relock::mutex (one non-template core for every kind).
//
// The parts say, for an owner ("<client-id>:<owner-id>") and a key:
//   - which hash field is its hold (a write hold appends ":write"), which channel a release
//     publishes on, and which channel its waiters listen on (the same, or one per waiter: a
//     fair lock tells only the head of its queue);
//   - the script calls (keys and arguments) of acquire, release, force release and give-up (what
//     a waiter that ends without the hold runs, when its tries left something on the server);
//   - how an acquire reply reads (acquired, with a token for kinds that hand one out; refused,
//     with the holder's TTL; or refused for good with an error of the kind's own);
//   - how many waiters a message wakes (the waiter list reads the payload through the kind: "0"
//     one, "1" all, a semaphore's count), or that waiters back off instead of listening.
// Releases are read the same way for every kind: nil (not a holder), 0 (still held) or 1
// (released, waiters told), under the unlock latch (data-layout §1).
//
// An ownerless grant (a plain semaphore's permits, a latch's opening) is nothing the watchdog
// records; a try of it whose reply was lost is taken back by the kind's take-back script under
// the try's own latch, which the acquire script writes when it grants (a latch's await grants
// nothing and has nothing to take back). An owner's lost try goes back through its release, as a
// take-back (release_context::take_back).
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <relock/config.hpp>

#include "exec/script.hpp"
#include "pubsub/waiter_list.hpp"
#include "renewal/hold_table.hpp"
#include "resp/bulk_strings.hpp"
#include "resp/reply.hpp"

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::waiting {

// Keys and arguments as they go on the wire (resp::bulk_strings): one allocation each, made
// per call.
struct script_call {
  resp::bulk_strings keys;
  resp::bulk_strings args;
};

// What a kind with a queue (the fair lock) needs beyond the call itself: the wall clock its
// deadlines are written in, and the client's settings for them (config::fair_lock_*).
struct queue_timing {
  std::int64_t now_ms = 0;
  std::chrono::milliseconds wait_timeout{0};          // a silent waiter's time to live
  std::chrono::milliseconds unheard_head_timeout{0};  // a head told but not listening
};

// What an acquire call is made from.
struct acquire_context {
  std::string_view key;
  std::string_view owner;
  std::chrono::milliseconds lease;
  bool waiting = false;  // a try of a waiting acquire (a fair lock queues it); false: try once
  std::string_view publish_command{};  // a fair lock's try may tell the head waiter
  queue_timing queue{};
  std::int64_t permits = 1;  // a semaphore's: how many the try takes
  // This try's latch. An ownerless kind's try writes it when it grants, so its take-back knows
  // what it did; an owner's take-back writes it (data-layout §8). Either way a try that reaches
  // Redis after its take-back finds it and changes nothing.
  std::string_view try_latch{};
  std::chrono::milliseconds latch_ttl{0};
};

// What a release call is made from.
struct release_context {
  std::string_view key;
  std::string_view owner;
  std::string_view channel;
  std::string_view latch;
  std::string_view publish_command;
  std::chrono::milliseconds lease;  // restored on a partial release
  std::chrono::milliseconds latch_ttl;
  queue_timing queue{};
  std::int64_t permits = 1;  // a semaphore's: how many go back
  // The undo of a try whose reply was lost: the script writes the latch even when it finds no
  // hold, so later copies of it, and the try, change nothing (data-layout §8).
  bool take_back = false;
};

struct force_release_context {
  std::string_view key;
  std::string_view channel;
  std::string_view publish_command;
  queue_timing queue{};
};

// What a give-up call is made from: under a latch of its own, so a resend changes nothing twice.
struct give_up_context {
  std::string_view key;
  std::string_view owner;
  std::string_view channel;
  std::string_view latch;
  std::string_view publish_command;
  std::chrono::milliseconds latch_ttl;
  queue_timing queue{};
};

// What a take-back call is made from (an ownerless kind's try whose reply was lost): the try's
// latch says whether it granted, and the take-back returns the grant under it.
struct take_back_context {
  std::string_view key;
  std::string_view channel;
  std::string_view try_latch;
  std::string_view publish_command;
  std::chrono::milliseconds latch_ttl;
};

// The wall clock in Unix milliseconds.
std::int64_t wall_clock_ms();
// Now, with the client's settings. The unheard-head timeout is off where a publish does not
// count every listener (classic pub/sub in a Cluster): an unheard head could not be told from
// one listening on another node.
queue_timing queue_timing_of(const client_core& core);

// An acquire reply, read by the kind.
struct acquire_reply {
  enum class outcome { acquired, refused, failed } result = outcome::failed;
  std::chrono::milliseconds holder_ttl{-1};  // refused: the holder's remaining TTL; -1 none
  std::string token{};                       // acquired: the kind's token (fencing, permit id)
  // Acquired: the owner's holds after it, when the script says (0: it does not). 1 means the
  // hold is new whatever this client remembers (an old fixed-lease hold of the owner expired).
  std::int64_t holds = 0;
  std::error_code ec{};  // failed: the kind's own refusal; empty keeps the server's error
};

// Every kind: a try, and the wait between tries.
struct grant_kind {
  const exec::script& acquire;
  script_call (*acquire_call)(const acquire_context& c);
  // A reply or an error reply (a transport failure never gets here).
  acquire_reply (*read_acquire)(const resp::reply& r);
  std::string (*channel)(std::string_view key);  // where releases publish
  // Where one owner's waits listen, when not on `channel` (a fair lock's waiter has its own).
  // Null: on `channel`, which the request then carries once (acquire_request::waiter_channel).
  std::string (*waiter_channel)(std::string_view key, std::string_view owner) = nullptr;
  // How many waiters a message wakes. Null: waiters do not listen for messages; they back off
  // (config::spin_backoff) and look again (a spin lock).
  pubsub::wake_count wakes = nullptr;
  // Null: giving up leaves nothing behind.
  const exec::script* give_up = nullptr;
  script_call (*give_up_call)(const give_up_context& c) = nullptr;
  // A grant nobody holds, undone when a try's reply is lost (an owner's is undone by its release).
  // Null: a try changes nothing, or the grant is a hold.
  const exec::script* take_back = nullptr;
  script_call (*take_back_call)(const take_back_context& c) = nullptr;
  // For observers (acquire_event::kind), when nobody holds the grant: a hold's kind names it.
  const char* what_granted = "acquire";
  // A wait that finds this client's waiters already on its channel queues behind them instead
  // of trying first (acquire_fsm::start): kinds whose order lives here, not on the server (a
  // fair lock queues there) and whose grant one waiter takes whole (not a read lock, which
  // many share, nor a semaphore's permits).
  bool queues_behind_own_waiters = false;
};

// How a grant goes back, under an unlock latch (release_op): an owner's hold, or a plain
// semaphore's permits, which anyone may give.
struct release_kind {
  const char* what;  // for messages: "lock", "read lock", "permit", "semaphore"
  const exec::script& release;
  script_call (*release_call)(const release_context& c);
};

// A grant that is an owner's hold: released by its owner, recorded and renewed by the watchdog.
struct hold_kind : release_kind {
  std::string (*field)(std::string_view owner);
  renewal::renewer renew;
};

// A lock: its grant is a hold, and anyone may break it (force_unlock). The parts are bases, so a
// lock's entries read as one table (kind.acquire, kind.release, kind.renew) and a lock_kind is
// the grant_kind and the hold_kind wherever the loop asks for one.
struct lock_kind : grant_kind, hold_kind {
  const exec::script& force_release;
  script_call (*force_release_call)(const force_release_context& c);
};

// A release script's source after release_head.lua (not_held). Uses only constant-initialised
// data, so other files may call it while initialising their scripts.
std::string with_release_head(std::string_view body);

// An acquire's call: `keys`, then the try's latch when it has one (the lock family's acquire
// scripts read it as an optional last key), and `args`.
script_call with_try_latch(std::initializer_list<std::string_view> keys, resp::bulk_strings args,
                           const acquire_context& c);

// What the lock family's replies mean where kinds agree: nil acquired, an integer the holder's
// TTL; the error replies NON_REENTRANT_REACQUIRE and RWLOCK_UPGRADE (a read hold's owner asking
// for the write side, which would wait for its own read for ever) refuse for good.
acquire_reply read_lock_reply(const resp::reply& r);
// "0" wakes one waiter, anything else every waiter (data-layout §8).
std::size_t lock_message_wakes(std::string_view payload);

// The reentrant lock's data (data-layout §2), which the fenced and spin locks share: its scripts
// and calls, for their parts.
namespace plain_lock {
extern const exec::script acquire;
extern const exec::script release;
extern const exec::script force_release;
extern const exec::script renew;
std::string field(std::string_view owner);  // the owner itself
std::string channel(std::string_view key);  // redisson_lock__channel:{key}
script_call acquire_call(const acquire_context& c);
script_call release_call(const release_context& c);
script_call force_release_call(const force_release_context& c);
void renew_hold(std::string_view key, std::string_view owner, std::int64_t holds,
                std::vector<std::string>& keys, std::vector<std::string>& args);

// The hold on this data, named `what` in messages, released by lock_release.lua as `call`
// builds it (release_call, or a variant of it).
constexpr hold_kind hold(const char* what,
                         script_call (*call)(const release_context&) = release_call) {
  return {{.what = what, .release = release, .release_call = call}, field, {renew, renew_hold}};
}
}  // namespace plain_lock

// The plain lock's kinds (src/waiting/lock_kind.cpp); the other locks' are in
// src/locks/lock_kinds.hpp.
extern const lock_kind reentrant_lock_kind;
extern const lock_kind non_reentrant_lock_kind;

}  // namespace relock::detail::waiting
