// What a lock kind is: a table that the one waiting loop (acquire_op + acquire_fsm), the one
// release path (release_op) and the watchdog read. A new kind is its scripts plus one small file
// that fills this table (lock_kind.cpp: the reentrant lock and its non-reentrant variant;
// rwlock_kind.cpp: the two sides of the read-write lock), and a thin public header whose handles
// are relock::Lock (one non-template core for every kind).
//
// The table says, for an owner ("<client-id>:<owner-id>") and a lock key:
//   - which hash field is its hold (a write hold appends ":write") and which channel its
//     waiters listen on;
//   - the script calls (keys and arguments) of acquire, release and force release, and what the
//     watchdog passes the renew script for one hold;
//   - the message a release publishes ("0" wakes one waiter, "1" every waiter: the waiter queues
//     read the payload, whatever the kind).
// Replies are read the same way for every kind: acquire answers nil (acquired), the holder's
// PTTL, or an error reply (see acquire_op); release answers nil (not a holder), 0 (still held)
// or 1 (released, waiters told), under the unlock latch (data-layout §1).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "exec/script.hpp"

namespace relock::detail {

struct script_call {
  std::vector<std::string> keys;
  std::vector<std::string> args;
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
};

struct lock_kind {
  const char* what;  // for messages: "lock", "read lock", "write lock"
  const exec::script& acquire;
  const exec::script& release;
  const exec::script& force_release;
  const exec::script& renew;
  std::string (*field)(std::string_view owner);
  std::string (*channel)(std::string_view key);
  script_call (*acquire_call)(std::string_view key, std::string_view owner,
                              std::chrono::milliseconds lease);
  script_call (*release_call)(const release_context& c);
  script_call (*force_release_call)(std::string_view key, std::string_view channel,
                                    std::string_view publish_command);
  // The per-hold argument of the renew script.
  std::string (*renew_arg)(std::string_view owner);
};

extern const lock_kind reentrant_lock_kind;
extern const lock_kind non_reentrant_lock_kind;
extern const lock_kind rwlock_read_kind;
extern const lock_kind rwlock_write_kind;

}  // namespace relock::detail
