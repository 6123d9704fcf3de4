// SPDX-License-Identifier: Apache-2.0
// The fair lock (data-layout §3) and its non-reentrant variant, as lock_kinds: the
// reentrant lock's hash, a queue of waiting owners with their deadlines, and a channel per
// waiter, on which a release tells the head of the queue alone. A waiter that ends its wait
// without the lock gives its place up (fair_give_up.lua). Renewal is the reentrant lock's.
#include "locks/lock_kinds.hpp"

#include "layout/naming.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail::locks {
namespace {

// Every fair script starts with the queue's functions (fair_queue.lua). The sources are built
// before the scripts below, which hash them, in this file's order of initialisation.
std::string with_queue(std::string_view body) {
  return std::string(scripts::fair_queue) + std::string(body);
}
const std::string acquire_source = with_queue(scripts::fair_acquire);
const std::string release_source = with_queue(waiting::with_release_head(scripts::fair_release));
const std::string force_release_source = with_queue(scripts::fair_force_release);
const std::string give_up_source = with_queue(scripts::fair_give_up);

const exec::script acquire{"fair_acquire", acquire_source};
const exec::script release{"fair_release", release_source};
const exec::script force_release{"fair_force_release", force_release_source};
const exec::script give_up{"fair_give_up", give_up_source};

std::string waiter_channel(std::string_view key, std::string_view owner) {
  return layout::fair_waiter_channel(key, owner);
}

// Every fair script's keys: the lock, its queue and deadlines, the channel its waiters' own
// channels are built from, and a request's latch when it has one.
resp::bulk_strings queue_keys(std::string_view key, std::string_view channel,
                              std::string_view latch = {}) {
  const std::string queue = layout::fair_queue_key(key), timeout = layout::fair_timeout_key(key);
  return latch.empty() ? resp::bulk_strings{key, queue, timeout, channel}
                       : resp::bulk_strings{key, queue, timeout, channel, latch};
}

waiting::script_call acquire_call(const waiting::acquire_context& c, const char* reentrant) {
  return {queue_keys(c.key, waiting::plain_lock::channel(c.key), c.try_latch),
          {std::to_string(c.lease.count()), c.owner, std::to_string(c.queue.wait_timeout.count()),
           std::to_string(c.queue.now_ms), c.waiting ? "wait" : "once", reentrant,
           std::to_string(c.queue.unheard_head_timeout.count()), c.publish_command}};
}
waiting::script_call reentrant_acquire_call(const waiting::acquire_context& c) {
  return acquire_call(c, "1");
}
waiting::script_call non_reentrant_acquire_call(const waiting::acquire_context& c) {
  return acquire_call(c, "0");
}

waiting::script_call release_call(const waiting::release_context& c) {
  return {queue_keys(c.key, c.channel, c.latch),
          {"0", std::to_string(c.lease.count()), c.owner, std::to_string(c.queue.now_ms),
           c.publish_command, std::to_string(c.latch_ttl.count()),
           std::to_string(c.queue.unheard_head_timeout.count()), c.take_back ? "1" : "0"}};
}

waiting::script_call force_release_call(const waiting::force_release_context& c) {
  return {queue_keys(c.key, c.channel),
          {"0", std::to_string(c.queue.now_ms), c.publish_command,
           std::to_string(c.queue.unheard_head_timeout.count())}};
}

waiting::script_call give_up_call(const waiting::give_up_context& c) {
  return {queue_keys(c.key, c.channel, c.latch),
          {c.owner, std::to_string(c.queue.wait_timeout.count()), std::to_string(c.queue.now_ms),
           "0", c.publish_command, std::to_string(c.latch_ttl.count()),
           std::to_string(c.queue.unheard_head_timeout.count())}};
}

// The two differ in their try alone: whether the owner may take the lock again.
constexpr waiting::lock_kind fair(
    waiting::script_call (*acquire_call)(const waiting::acquire_context&)) {
  return {{.acquire = acquire,
           .acquire_call = acquire_call,
           .read_acquire = waiting::read_lock_reply,
           .channel = waiting::plain_lock::channel,
           .waiter_channel = waiter_channel,
           .wakes = waiting::lock_message_wakes,
           .give_up = &give_up,
           .give_up_call = give_up_call},
          {{.what = "fair lock", .release = release, .release_call = release_call},
           waiting::plain_lock::field,
           {waiting::plain_lock::renew, waiting::plain_lock::renew_hold}},
          force_release,
          force_release_call};
}

}  // namespace

constinit const waiting::lock_kind fair_lock_kind = fair(reentrant_acquire_call);
constinit const waiting::lock_kind non_reentrant_fair_lock_kind = fair(non_reentrant_acquire_call);

}  // namespace relock::detail::locks
