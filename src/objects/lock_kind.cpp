// The reentrant lock (data-layout §2) and its non-reentrant variant, as lock_kind tables.
#include "objects/lock_kind.hpp"

#include "objects/naming.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail {
namespace {

// The embedded sources are constant-initialised string_views, so these may use them at
// dynamic-initialisation time in any order.
const exec::script acquire{"lock_acquire", scripts::lock_acquire};
const exec::script acquire_once{"lock_acquire_once", scripts::lock_acquire_once};
const exec::script release{"lock_release", scripts::lock_release};
const exec::script force_release{"lock_force_release", scripts::lock_force_release};
const exec::script renew{"lock_renew", scripts::lock_renew};

std::string owner_field(std::string_view owner) { return std::string(owner); }

std::string channel(std::string_view key) { return objects::lock_channel(key); }

script_call acquire_call(std::string_view key, std::string_view owner,
                         std::chrono::milliseconds lease) {
  return {{std::string(key)}, {std::to_string(lease.count()), std::string(owner)}};
}

script_call release_call(const release_context& c) {
  return {{std::string(c.key), std::string(c.channel), std::string(c.latch)},
          {"0", std::to_string(c.lease.count()), std::string(c.owner),
           std::string(c.publish_command), std::to_string(c.latch_ttl.count())}};
}

script_call force_release_call(std::string_view key, std::string_view channel,
                               std::string_view publish_command) {
  return {{std::string(key), std::string(channel)}, {"0", std::string(publish_command)}};
}

}  // namespace

const lock_kind reentrant_lock_kind{
    "lock",  acquire,      release,      force_release,      renew,      owner_field,
    channel, acquire_call, release_call, force_release_call, owner_field};
const lock_kind non_reentrant_lock_kind{"lock",       acquire_once,       release,    force_release,
                                        renew,        owner_field,        channel,    acquire_call,
                                        release_call, force_release_call, owner_field};

}  // namespace relock::detail
