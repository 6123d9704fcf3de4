// SPDX-License-Identifier: Apache-2.0
// The reentrant lock (data-layout §2) and its non-reentrant variant, as lock_kinds, and the
// reply and message readings the lock family shares.
#include "waiting/lock_kind.hpp"

#include <relock/errors.hpp>

#include "client_core.hpp"
#include "layout/naming.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail::waiting {

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

queue_timing queue_timing_of(const client_core& core) {
  const config& settings = core.settings();
  return {wall_clock_ms(), settings.fair_lock_wait_timeout,
          core.publish_counts_listeners() ? settings.fair_lock_unheard_head_timeout
                                          : std::chrono::milliseconds(0)};
}

std::string with_release_head(std::string_view body) {
  return std::string(scripts::release_head) + std::string(body);
}

script_call with_try_latch(std::initializer_list<std::string_view> keys, resp::bulk_strings args,
                           const acquire_context& c) {
  script_call call{{}, std::move(args)};
  std::size_t bytes = c.try_latch.empty() ? 0 : resp::bulk_strings::encoded_size(c.try_latch);
  for (auto key : keys) bytes += resp::bulk_strings::encoded_size(key);
  call.keys.reserve(bytes);
  for (auto key : keys) call.keys.push_back(key);
  if (!c.try_latch.empty()) call.keys.push_back(c.try_latch);
  return call;
}

acquire_reply read_lock_reply(const resp::reply& r) {
  using outcome = acquire_reply::outcome;
  if (r.is_nil()) return {.result = outcome::acquired};
  if (r.is_integer()) {
    return {.result = outcome::refused, .holder_ttl = std::chrono::milliseconds(r.integer)};
  }
  acquire_reply failed;
  if (r.error_code() == "NON_REENTRANT_REACQUIRE") failed.ec = errc::non_reentrant;
  if (r.error_code() == "RWLOCK_UPGRADE") failed.ec = errc::would_deadlock;
  if (!r.is_error()) failed.ec = errc::server_error;  // no reply a lock script gives
  return failed;
}

std::size_t lock_message_wakes(std::string_view payload) {
  return payload == "0" ? 1 : pubsub::wake_all;
}

namespace plain_lock {

// The embedded sources are constant-initialised string_views, so these may use them at
// dynamic-initialisation time in any order.
const exec::script acquire{"lock_acquire", scripts::lock_acquire};
// Built before `release`, which hashes it, in this file's order of initialisation.
const std::string release_source = with_release_head(scripts::lock_release);
const exec::script release{"lock_release", release_source};
const exec::script force_release{"lock_force_release", scripts::lock_force_release};
const exec::script renew{"lock_renew", scripts::lock_renew};

std::string field(std::string_view owner) { return std::string(owner); }

std::string channel(std::string_view key) { return layout::lock_channel(key); }

script_call acquire_call(const acquire_context& c) {
  return with_try_latch({c.key}, {std::to_string(c.lease.count()), c.owner}, c);
}

script_call release_call(const release_context& c) {
  return {{c.key, c.channel, c.latch},
          {"0", std::to_string(c.lease.count()), c.owner, c.publish_command,
           std::to_string(c.latch_ttl.count()), c.take_back ? "1" : "0"}};
}

script_call force_release_call(const force_release_context& c) {
  return {{c.key, c.channel}, {"0", c.publish_command}};
}

// lock_renew.lua: KEYS[i] the hash, ARGV[i + 1] the field.
void renew_hold(std::string_view key, std::string_view owner, std::int64_t,
                std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.emplace_back(key);
  args.emplace_back(owner);
}

}  // namespace plain_lock

namespace {

const exec::script acquire_once{"lock_acquire_once", scripts::lock_acquire_once};

// The two differ in their try alone: the once script refuses an owner that holds the lock.
constexpr lock_kind plain(const exec::script& acquire) {
  return {{.acquire = acquire,
           .acquire_call = plain_lock::acquire_call,
           .read_acquire = read_lock_reply,
           .channel = plain_lock::channel,
           .wakes = lock_message_wakes,
           .queues_behind_own_waiters = true},
          plain_lock::hold("lock"),
          plain_lock::force_release,
          plain_lock::force_release_call};
}

}  // namespace

constinit const lock_kind reentrant_lock_kind = plain(plain_lock::acquire);
constinit const lock_kind non_reentrant_lock_kind = plain(acquire_once);

}  // namespace relock::detail::waiting
