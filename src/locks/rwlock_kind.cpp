// SPDX-License-Identifier: Apache-2.0
// The read-write lock's two sides (data-layout §4), as lock_kinds. Both share the hash,
// the channel redisson_rwlock:{name} and the renew script; a write hold's field is the owner
// with ":write" appended. A read release publishes "0" (wake one), a write release "1" (wake
// every waiter: readers queued behind a writer all go at once).
#include "locks/lock_kinds.hpp"

#include "layout/naming.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail::locks {
namespace {

const exec::script read_acquire{"rwlock_read_acquire", scripts::rwlock_read_acquire};
// Built before the scripts that hash them, in this file's order of initialisation.
const std::string read_release_source = waiting::with_release_head(scripts::rwlock_read_release);
const std::string write_release_source = waiting::with_release_head(scripts::rwlock_write_release);
const exec::script read_release{"rwlock_read_release", read_release_source};
const exec::script write_acquire{"rwlock_write_acquire", scripts::rwlock_write_acquire};
const exec::script write_release{"rwlock_write_release", write_release_source};
const exec::script force_release{"rwlock_force_release", scripts::rwlock_force_release};
const exec::script renew{"rwlock_renew", scripts::rwlock_renew};

constexpr std::string_view write_suffix = ":write";

std::string read_field(std::string_view owner) { return std::string(owner); }
std::string write_field(std::string_view owner) {
  return std::string(owner) + std::string(write_suffix);
}
std::string channel(std::string_view key) { return layout::rwlock_channel(key); }

waiting::script_call read_acquire_call(const waiting::acquire_context& c) {
  return waiting::with_try_latch(
      {c.key, layout::rwlock_timeout_prefix(c.key, c.owner)},
      {std::to_string(c.lease.count()), read_field(c.owner), write_field(c.owner)}, c);
}

waiting::script_call write_acquire_call(const waiting::acquire_context& c) {
  return waiting::with_try_latch(
      {c.key}, {std::to_string(c.lease.count()), write_field(c.owner), read_field(c.owner)}, c);
}

waiting::script_call read_release_call(const waiting::release_context& c) {
  return {{c.key, c.channel, layout::rwlock_timeout_prefix(c.key, c.owner),
           layout::rwlock_key_prefix(c.key), c.latch},
          {"0", read_field(c.owner), c.publish_command, std::to_string(c.latch_ttl.count()),
           c.take_back ? "1" : "0"}};
}

waiting::script_call write_release_call(const waiting::release_context& c) {
  return {{c.key, c.channel, c.latch},
          {"1", std::to_string(c.lease.count()), write_field(c.owner), c.publish_command,
           std::to_string(c.latch_ttl.count()), c.take_back ? "1" : "0"}};
}

waiting::script_call force_release_call(const waiting::force_release_context& c) {
  return {{c.key, c.channel, layout::rwlock_key_prefix(c.key)}, {"1", c.publish_command}};
}

// rwlock_renew.lua: per hold, KEYS the hash and its timeout keys, ARGV the field and their
// number. A read hold has one timeout key per re-entry (the release removes the last one).
void renew_read(std::string_view key, std::string_view owner, std::int64_t holds,
                std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.emplace_back(key);
  const std::string prefix = layout::rwlock_timeout_prefix(key, owner) + ":";
  for (std::int64_t n = 1; n <= holds; ++n) keys.push_back(prefix + std::to_string(n));
  args.push_back(read_field(owner));
  args.push_back(std::to_string(holds));
}

void renew_write(std::string_view key, std::string_view owner, std::int64_t,
                 std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.emplace_back(key);
  args.push_back(write_field(owner));
  args.emplace_back("0");
}

}  // namespace

constinit const waiting::lock_kind rwlock_read_kind{
    {.acquire = read_acquire,
     .acquire_call = read_acquire_call,
     .read_acquire = waiting::read_lock_reply,
     .channel = channel,
     .wakes = waiting::lock_message_wakes},
    {{.what = "read lock", .release = read_release, .release_call = read_release_call},
     read_field,
     {renew, renew_read}},
    force_release,
    force_release_call};
constinit const waiting::lock_kind rwlock_write_kind{
    {.acquire = write_acquire,
     .acquire_call = write_acquire_call,
     .read_acquire = waiting::read_lock_reply,
     .channel = channel,
     .wakes = waiting::lock_message_wakes},
    {{.what = "write lock", .release = write_release, .release_call = write_release_call},
     write_field,
     {renew, renew_write}},
    force_release,
    force_release_call};

}  // namespace relock::detail::locks
