// SPDX-License-Identifier: Apache-2.0
#include "layout/naming.hpp"

#include "layout/ids.hpp"
#include "topology/slot.hpp"

#include <relock/errors.hpp>

namespace relock::layout {
namespace {

// Names are keys: Redis allows 512 MB, but a lock name over 64 KiB is a bug, not a name.
constexpr std::size_t max_name_size = 64 * 1024;

bool has_brace(std::string_view name) { return name.find('{') != std::string_view::npos; }

// The main key's hash tag as Redisson writes it: the name itself when it already has a brace
// (the user chose the tag), else the whole name in braces; appended to `out`.
void append_tagged(std::string& out, std::string_view name) {
  const bool braces = !has_brace(name);
  if (braces) out += '{';
  out += name;
  if (braces) out += '}';
}

std::size_t tagged_size(std::string_view name) { return name.size() + (has_brace(name) ? 0 : 2); }

std::string tagged(std::string_view name) {
  std::string out;
  out.reserve(tagged_size(name));
  append_tagged(out, name);
  return out;
}

// prefix + ":" + tagged(name), with room for `more` chars after it: one allocation (every
// acquire and release builds a few of these).
std::string prefixed_reserving(std::string_view prefix, std::string_view name, std::size_t more) {
  std::string out;
  out.reserve(prefix.size() + 1 + tagged_size(name) + more);
  out += prefix;
  out += ':';
  append_tagged(out, name);
  return out;
}

std::string join(std::string_view head, std::string_view tail) {
  std::string out;
  out.reserve(head.size() + 1 + tail.size());
  out += head;
  out += ':';
  out += tail;
  return out;
}

}  // namespace

void check_one_slot(std::string_view key, std::initializer_list<std::string_view> derived) {
  const auto slot = topology::slot_of(key);
  for (auto name : derived) {
    if (topology::slot_of(name) != slot) {
      throw error(errc::invalid_argument,
                  "'" + std::string(key) +
                      "' cannot be a lock in a Redis Cluster: its derived name '" +
                      std::string(name) + "' hashes to slot " +
                      std::to_string(topology::slot_of(name)) + ", not " + std::to_string(slot) +
                      " (a '{' without a non-empty '{...}' tag after it)");
    }
  }
}

void check_name(std::string_view name, const char* what) {
  if (name.empty()) throw error(errc::invalid_argument, std::string(what) + " is empty");
  if (name.size() > max_name_size) {
    throw error(errc::invalid_argument, std::string(what) + " is " + std::to_string(name.size()) +
                                            " bytes; the limit is 65536");
  }
}

std::string prefixed(std::string_view prefix, std::string_view name) {
  return prefixed_reserving(prefix, name, 0);
}

std::string suffixed(std::string_view name, std::string_view suffix) {
  return join(tagged(name), suffix);
}

std::string lock_channel(std::string_view name) { return prefixed("redisson_lock__channel", name); }

std::string unlock_latch_key(std::string_view name, std::string_view request_id) {
  std::string out = prefixed_reserving("redisson_unlock_latch", name, 1 + request_id.size());
  out += ':';
  out += request_id;
  return out;
}

std::string random_unlock_latch_key(std::string_view name) {
  char id[request_id_size];
  random_request_id(id);
  return unlock_latch_key(name, std::string_view(id, sizeof id));
}

std::string fair_queue_key(std::string_view name) { return prefixed("redisson_lock_queue", name); }

std::string fair_timeout_key(std::string_view name) {
  return prefixed("redisson_lock_timeout", name);
}

std::string fair_waiter_channel(std::string_view name, std::string_view owner) {
  return join(lock_channel(name), owner);
}

std::string rwlock_channel(std::string_view name) { return prefixed("redisson_rwlock", name); }

std::string rwlock_timeout_prefix(std::string_view name, std::string_view owner) {
  return suffixed(name, owner) + ":rwlock_timeout";
}

std::string rwlock_key_prefix(std::string_view name) { return tagged(name); }

std::string fenced_token_key(std::string_view name) {
  return prefixed("redisson_lock_token", name);
}

std::string semaphore_channel(std::string_view name) { return prefixed("redisson_sc", name); }

std::string semaphore_timeout_key(std::string_view name) { return suffixed(name, "timeout"); }

std::string delayed_queue_list(std::string_view name) {
  return prefixed("redisson_delay_queue", name);
}

std::string delayed_queue_timeouts(std::string_view name) {
  return prefixed("redisson_delay_queue_timeout", name);
}

std::string delayed_queue_channel(std::string_view name) {
  return prefixed("redisson_delay_queue_channel", name);
}

std::string latch_channel(std::string_view name) {
  std::string out = "redisson_countdownlatch__channel__{";
  out += name;
  out += '}';
  return out;
}

}  // namespace relock::layout
