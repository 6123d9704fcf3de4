// SPDX-License-Identifier: Apache-2.0
// What a lock kind is: a table that the one waiting loop (acquire_op + acquire_fsm), the one
// release path (release_op) and the watchdog read. A new kind is its scripts plus one small file
// that fills this table (lock_kind.cpp: the reentrant lock and its non-reentrant variant;
// rwlock_kind.cpp: the two sides of the read-write lock), and a thin public header whose handles
// are relock::mutex (one non-template core for every kind).
//
// The table says, for an owner ("<client-id>:<owner-id>") and a lock key:
//   - which hash field is its hold (a write hold appends ":write"), which channel a release
//     publishes on, and which channel its waiters listen on (the same, or one per waiter: a
//     fair lock tells only the head of its queue);
//   - the script calls (keys and arguments) of acquire, release, force release and give-up (what
//     a waiter that ends without the hold runs, when its tries left something on the server), and
//     how the watchdog renews a hold (renewal::renewer: each hold names all the keys it touches);
//   - how an acquire reply reads (acquired, with a token for kinds that hand one out; refused,
//     with the holder's TTL; or refused for good with an error of the kind's own);
//   - how many waiters a message wakes (the waiter list reads the payload through the kind: "0"
//     one, "1" all, a semaphore's count), or that waiters back off instead of listening.
// Releases are read the same way for every kind: nil (not a holder), 0 (still held) or 1
// (released, waiters told), under the unlock latch (data-layout §1).
//
// The synchronizers wait through the same loop (semaphore_kind.cpp, permit_semaphore_kind.cpp,
// latch_kind.cpp). A permit-expirable semaphore's permit is a hold like a lock's, its id the
// owner; a plain semaphore's permits and a latch's opening are ownerless: the watchdog records
// nothing, and a try whose reply was lost is taken back by the kind's take-back script under the
// try's own latch, which the acquire script writes when it grants (a latch's await grants
// nothing and has nothing to take back).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <relock/config.hpp>

#include "exec/script.hpp"
#include "pubsub/waiter_list.hpp"
#include "renewal/hold_table.hpp"
#include "resp/reply.hpp"

namespace relock::detail {

struct script_call {
  std::vector<std::string> keys;
  std::vector<std::string> args;
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
class client_core;
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

struct lock_kind {
  const char* what;  // for messages: "lock", "read lock", "write lock"
  const exec::script& acquire;
  const exec::script& release;
  const exec::script& force_release;
  renewal::renewer renew;
  std::string (*field)(std::string_view owner);
  std::string (*channel)(std::string_view key);
  std::string (*waiter_channel)(std::string_view key, std::string_view owner);
  script_call (*acquire_call)(const acquire_context& c);
  // A reply or an error reply (a transport failure never gets here).
  acquire_reply (*read_acquire)(const resp::reply& r);
  script_call (*release_call)(const release_context& c);
  script_call (*force_release_call)(const force_release_context& c);
  // Null: giving up leaves nothing behind.
  const exec::script* give_up = nullptr;
  script_call (*give_up_call)(const give_up_context& c) = nullptr;
  pubsub::wake_count wakes = nullptr;
  // Waiters back off (config::spin_backoff) instead of listening for messages: a spin lock.
  bool spins = false;
  // A grant is nobody's hold (a plain semaphore's permits, a latch opening): the watchdog
  // records nothing, and a try whose reply was lost is undone by `take_back` (null: a try
  // changes nothing).
  bool ownerless = false;
  const exec::script* take_back = nullptr;
  script_call (*take_back_call)(const take_back_context& c) = nullptr;
};

// A release script's source after release_head.lua (not_held). Uses only constant-initialised
// data, so other files may call it while initialising their scripts.
std::string with_release_head(std::string_view body);

// `call` with the try's latch as its last key, when it has one (the lock family's acquire
// scripts read it as an optional last key).
script_call with_try_latch(script_call call, const acquire_context& c);

// What the lock family's replies mean where kinds agree: nil acquired, an integer the holder's
// TTL; the error replies NON_REENTRANT_REACQUIRE and RWLOCK_UPGRADE (a read hold's owner asking
// for the write side, which would wait for its own read for ever) refuse for good.
acquire_reply read_lock_reply(const resp::reply& r);
// "0" wakes one waiter, anything else every waiter (data-layout §8).
std::size_t lock_message_wakes(std::string_view payload);
// A semaphore's message is its new count: permits for that many waiters' demands (none when 0 or
// less; every waiter for a payload that is not a count).
std::size_t semaphore_message_wakes(std::string_view payload);

// The reentrant lock's data (data-layout §2), which the fenced and spin locks share: its scripts
// and calls, for their tables.
namespace plain_lock {
extern const exec::script acquire;
extern const exec::script release;
extern const exec::script force_release;
extern const exec::script renew;
std::string field(std::string_view owner);  // the owner itself
std::string channel(std::string_view key);  // redisson_lock__channel:{key}
std::string waiter_channel(std::string_view key, std::string_view owner);  // the channel
script_call acquire_call(const acquire_context& c);
script_call release_call(const release_context& c);
script_call force_release_call(const force_release_context& c);
void renew_hold(std::string_view key, std::string_view owner, std::int64_t holds,
                std::vector<std::string>& keys, std::vector<std::string>& args);
// A table on this data with `acquire` (called as acquire_call builds it): a kind built on the
// reentrant lock's data starts from it and changes what differs.
lock_kind table(const char* what, const exec::script& acquire);
}  // namespace plain_lock

extern const lock_kind reentrant_lock_kind;
extern const lock_kind non_reentrant_lock_kind;
extern const lock_kind rwlock_read_kind;
extern const lock_kind rwlock_write_kind;
extern const lock_kind fair_lock_kind;
extern const lock_kind non_reentrant_fair_lock_kind;
extern const lock_kind fenced_lock_kind;
extern const lock_kind spin_lock_kind;
// Synchronizers (data-layout §7).
extern const lock_kind semaphore_kind;
extern const lock_kind semaphore_waiting_when_absent_kind;
extern const lock_kind permit_semaphore_kind;
extern const lock_kind permit_semaphore_waiting_when_absent_kind;
extern const lock_kind latch_kind;

}  // namespace relock::detail
