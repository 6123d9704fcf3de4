// SPDX-License-Identifier: Apache-2.0
// relock top: one row per object (a lock, a semaphore or latch, a queue) as a refresh read it,
// the orders `--sort` and the `s` key choose between, and each row's cells as the screen shows
// them. Pure: no I/O, so the screen and the JSON agree on what a row says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client_directory.hpp"

namespace relock_cli {

struct top_holder {
  std::string owner;  // the owner field, as the lock's hash has it (":write" taken off)
  std::int64_t holds = 0;
  std::string side;                         // "exclusive", "read", "write"
  std::optional<holder_process> process{};  // from CLIENT LIST; none: unknown
};

// What a refresh read of one object. Fields that do not apply to its kind stay empty.
struct top_object {
  std::string name;
  // lock, fair, fenced, read-write (the lock family, as relock::to_string names them), counter
  // (a semaphore's permits or a latch's count: the data cannot tell which), permit-semaphore,
  // queue.
  std::string kind;
  std::string node;  // host:port of the master that serves it
  std::vector<top_holder> holders;
  std::optional<std::int64_t> remaining_lease_ms;  // a held lock with an expiry
  std::optional<std::int64_t> waiters;             // a fair lock's queue
  std::optional<std::int64_t> subscribers;         // of its channel: processes waiting, mostly
  std::optional<std::int64_t> permits;             // available; a counter's value
  std::optional<std::int64_t> permits_taken;       // a permit-expirable semaphore's
  std::optional<std::int64_t> length;              // a queue's, ready to take
  std::optional<std::int64_t> delayed;             // a queue's delayed elements, not yet due

  bool lock_family() const;
};

// The orders, in the order `s` goes through them.
const std::vector<std::string>& sort_keys();
// The order after `key`, wrapping around.
std::string next_sort_key(const std::string& key);
// Sorts by `key`: name (A-Z), kind, holders (most first), waiters (fair queue and subscribers
// together, most first), lease (the least left first; none last). Ties go by name.
void sort_objects(std::vector<top_object>& objects, const std::string& key);

// The screen's columns, and one row's cells in their order ("-": does not apply).
const std::vector<std::string>& column_titles();
std::vector<std::string> cells_of(const top_object& o);

// An owner field as a row shows it: the client id's first 8 characters and the thread,
// "6c5f1e0a:77"; another client's field, as short.
std::string short_owner(const std::string& owner);

}  // namespace relock_cli
