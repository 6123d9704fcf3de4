// The read-write lock's two sides (data-layout §4), as lock_kind tables. Both share the hash,
// the channel redisson_rwlock:{name} and the renew script; a write hold's field is the owner
// with ":write" appended. A read release publishes "0" (wake one), a write release "1" (wake
// every waiter: readers queued behind a writer all go at once).
#include "objects/lock_kind.hpp"

#include "objects/naming.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail {
namespace {

const exec::script read_acquire{"rwlock_read_acquire", scripts::rwlock_read_acquire};
const exec::script read_release{"rwlock_read_release", scripts::rwlock_read_release};
const exec::script write_acquire{"rwlock_write_acquire", scripts::rwlock_write_acquire};
const exec::script write_release{"rwlock_write_release", scripts::rwlock_write_release};
const exec::script force_release{"rwlock_force_release", scripts::rwlock_force_release};
const exec::script renew{"rwlock_renew", scripts::rwlock_renew};

constexpr std::string_view write_suffix = ":write";

std::string read_field(std::string_view owner) { return std::string(owner); }
std::string write_field(std::string_view owner) {
  return std::string(owner) + std::string(write_suffix);
}
std::string channel(std::string_view key) { return objects::rwlock_channel(key); }
// The renew script renews every hold of the owner on the key, read or write.
std::string renew_arg(std::string_view owner) { return std::string(owner); }

script_call read_acquire_call(std::string_view key, std::string_view owner,
                              std::chrono::milliseconds lease) {
  return {{std::string(key), objects::rwlock_timeout_prefix(key, owner)},
          {std::to_string(lease.count()), read_field(owner), write_field(owner)}};
}

script_call write_acquire_call(std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease) {
  return {{std::string(key)},
          {std::to_string(lease.count()), write_field(owner), read_field(owner)}};
}

script_call read_release_call(const release_context& c) {
  return {
      {std::string(c.key), std::string(c.channel), objects::rwlock_timeout_prefix(c.key, c.owner),
       objects::rwlock_key_prefix(c.key), std::string(c.latch)},
      {"0", read_field(c.owner), std::string(c.publish_command),
       std::to_string(c.latch_ttl.count())}};
}

script_call write_release_call(const release_context& c) {
  return {{std::string(c.key), std::string(c.channel), std::string(c.latch)},
          {"1", std::to_string(c.lease.count()), write_field(c.owner),
           std::string(c.publish_command), std::to_string(c.latch_ttl.count())}};
}

script_call force_release_call(std::string_view key, std::string_view channel,
                               std::string_view publish_command) {
  return {{std::string(key), std::string(channel), objects::rwlock_key_prefix(key)},
          {"1", std::string(publish_command)}};
}

}  // namespace

const lock_kind rwlock_read_kind{
    "read lock", read_acquire,      read_release,      force_release,      renew,    read_field,
    channel,     read_acquire_call, read_release_call, force_release_call, renew_arg};
const lock_kind rwlock_write_kind{
    "write lock", write_acquire,      write_release,      force_release,      renew,    write_field,
    channel,      write_acquire_call, write_release_call, force_release_call, renew_arg};

}  // namespace relock::detail
