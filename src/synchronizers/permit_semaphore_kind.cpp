// SPDX-License-Identifier: Apache-2.0
// The permit-expirable semaphore (data-layout §7): a permit is a grant and a hold whose owner
// is its id (32 hex digits here, 16 bytes in Redis), scored in the expiry zset by the client's
// wall clock. The watchdog renews a permit taken without a lease (permit_renew.lua, by the same
// clock); every script first takes back expired permits. A refused try sleeps until the earliest
// permit expires, at most a second. Nobody force-releases a permit: it is no lock.
#include <algorithm>

#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "synchronizers/synchronizer_scripts.hpp"
#include "waiting/acquire_fsm.hpp"

namespace relock::detail::synchronizers {
namespace {

std::string channel(std::string_view key) { return layout::semaphore_channel(key); }
std::string field(std::string_view owner) { return std::string(owner); }

// The id as Redis stores it. Ids are checked where users hand them in (32 hex digits).
std::string raw_id(std::string_view id) { return layout::from_hex(id).value_or(std::string()); }

waiting::script_call acquire_call(const waiting::acquire_context& c, bool wait_when_absent) {
  const std::int64_t now = c.queue.now_ms;
  return {{c.key, layout::semaphore_timeout_key(c.key), channel(c.key)},
          {std::to_string(now + c.lease.count()), raw_id(c.owner), std::to_string(now),
           c.publish_command, wait_when_absent ? "1" : "0"}};
}
waiting::script_call acquire_or_refuse(const waiting::acquire_context& c) {
  return acquire_call(c, false);
}
waiting::script_call acquire_or_wait(const waiting::acquire_context& c) {
  return acquire_call(c, true);
}

waiting::acquire_reply read_acquire(const resp::reply& r) {
  waiting::acquire_reply read = waiting::read_lock_reply(r);
  if (r.error_code() == "NOT_INITIALIZED") read.ec = errc::not_initialized;
  // A permit's lease may be long: a lost message costs at most the recheck.
  if (read.result == waiting::acquire_reply::outcome::refused) {
    read.holder_ttl = read.holder_ttl.count() < 0
                          ? read.holder_ttl
                          : std::min(read.holder_ttl, waiting::acquire_fsm::no_ttl_recheck);
  }
  return read;
}

waiting::script_call release_call(const waiting::release_context& c) {
  return {{c.key, layout::semaphore_timeout_key(c.key), c.channel, c.latch},
          {raw_id(c.owner), c.publish_command, std::to_string(c.latch_ttl.count()),
           std::to_string(c.queue.now_ms)}};
}

// permit_renew.lua: KEYS[i] the expiry zset, ARGV[i + 1] "<now>:<permit id>". The expiry is
// written by this client's wall clock, as the acquire's and every reclaim's (Redisson's too):
// the server's clock could be behind theirs and make a renewed permit look expired.
void renew_permit(std::string_view key, std::string_view owner, std::int64_t,
                  std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.push_back(layout::semaphore_timeout_key(key));
  args.push_back(std::to_string(waiting::wall_clock_ms()) + ":" + raw_id(owner));
}

// The two differ in their try alone: what a name with no count does.
constexpr waiting::grant_kind grant(
    waiting::script_call (*acquire)(const waiting::acquire_context&)) {
  return {.acquire = synchronizer_scripts::permit_acquire,
          .acquire_call = acquire,
          .read_acquire = read_acquire,
          .channel = channel,
          .wakes = semaphore_message_wakes};
}
constinit const waiting::grant_kind refusing = grant(acquire_or_refuse);
constinit const waiting::grant_kind waiting = grant(acquire_or_wait);

}  // namespace

const waiting::grant_kind& permit_grant(bool wait_when_absent) {
  return wait_when_absent ? waiting : refusing;
}

constinit const waiting::hold_kind permit_hold{{.what = "permit",
                                                .release = synchronizer_scripts::permit_release,
                                                .release_call = release_call},
                                               field,
                                               {synchronizer_scripts::permit_renew, renew_permit}};

}  // namespace relock::detail::synchronizers
