// SPDX-License-Identifier: Apache-2.0
// The counting semaphore (data-layout §7): an ownerless grant of n permits from the count under
// the name. A try that grants writes its own latch, so a try whose reply was lost is taken back
// exactly (semaphore_take_back.lua); a release adds permits under an unlock latch, whoever took
// them. Messages carry the new count: a waiter is woken when its demand fits in it. Nothing is
// held, so nothing renews and nothing is force-released.
#include "synchronizers/synchronizer_kinds.hpp"

#include <charconv>

#include "layout/naming.hpp"
#include "synchronizers/synchronizer_scripts.hpp"

namespace relock::detail::synchronizers {

// A count published on a semaphore's channel: how many permits a message may hand out.
std::size_t semaphore_message_wakes(std::string_view payload) {
  long long count = 0;
  const auto [end, ec] = std::from_chars(payload.data(), payload.data() + payload.size(), count);
  if (ec != std::errc() || end != payload.data() + payload.size()) return pubsub::wake_all;
  return count > 0 ? static_cast<std::size_t>(count) : 0;
}

namespace {

std::string channel(std::string_view key) { return layout::semaphore_channel(key); }

waiting::script_call acquire_call(const waiting::acquire_context& c, bool wait_when_absent) {
  return {{c.key, c.try_latch},
          {std::to_string(c.permits), wait_when_absent ? "1" : "0",
           std::to_string(c.latch_ttl.count())}};
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
  return read;
}

waiting::script_call release_call(const waiting::release_context& c) {
  return {{c.key, c.channel, c.latch},
          {std::to_string(c.permits), c.publish_command, std::to_string(c.latch_ttl.count())}};
}

waiting::script_call take_back_call(const waiting::take_back_context& c) {
  return {{c.key, c.channel, c.try_latch},
          {c.publish_command, std::to_string(c.latch_ttl.count())}};
}

// The two differ in their try alone: what a name with no count does.
constexpr waiting::grant_kind grant(
    waiting::script_call (*acquire)(const waiting::acquire_context&)) {
  return {.acquire = synchronizer_scripts::semaphore_acquire,
          .acquire_call = acquire,
          .read_acquire = read_acquire,
          .channel = channel,
          .wakes = semaphore_message_wakes,
          .take_back = &synchronizer_scripts::semaphore_take_back,
          .take_back_call = take_back_call,
          .what_granted = "semaphore"};
}
constinit const waiting::grant_kind refusing = grant(acquire_or_refuse);
constinit const waiting::grant_kind waiting = grant(acquire_or_wait);

}  // namespace

const waiting::grant_kind& semaphore_grant(bool wait_when_absent) {
  return wait_when_absent ? waiting : refusing;
}

constinit const waiting::release_kind semaphore_release{
    .what = "semaphore",
    .release = synchronizer_scripts::semaphore_release,
    .release_call = release_call};

}  // namespace relock::detail::synchronizers
