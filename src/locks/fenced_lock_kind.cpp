// SPDX-License-Identifier: Apache-2.0
// The fenced lock (data-layout §5) as a waiting::lock_kind: the reentrant lock's data, plus a
// counter that every acquisition (re-entries too) advances and hands out as its token.
#include <charconv>

#include <relock/errors.hpp>

#include "layout/naming.hpp"
#include "locks/lock_kinds.hpp"
#include "scripts/scripts.hpp"

namespace relock::detail::locks {
namespace {

const exec::script acquire{"fenced_acquire", scripts::fenced_acquire};

waiting::script_call acquire_call(const waiting::acquire_context& c) {
  return waiting::with_try_latch({c.key, layout::fenced_token_key(c.key)},
                                 {std::to_string(c.lease.count()), c.owner}, c);
}

// {-1, token, holds}: acquired. {PTTL, -1}: refused (a PTTL of -1 is a holder without TTL: the
// token, always positive, tells the two apart). Any other reply is an error.
waiting::acquire_reply read_acquire(const resp::reply& r) {
  using outcome = waiting::acquire_reply::outcome;
  if (r.is_error()) return waiting::read_lock_reply(r);
  const auto integer_at = [&r](std::size_t i) {
    return r.elements.size() > i && r.elements[i].is_integer();
  };
  if (!r.is_array() || !integer_at(0) || !integer_at(1)) {
    return {.result = outcome::failed, .ec = errc::server_error};
  }
  const std::int64_t first = r.elements[0].integer, token = r.elements[1].integer;
  if (first != -1 || token <= 0) {
    return {.result = outcome::refused, .holder_ttl = std::chrono::milliseconds(first)};
  }
  return {.result = outcome::acquired,
          .token = std::to_string(token),
          .holds = integer_at(2) ? r.elements[2].integer : 0};
}

}  // namespace

constinit const waiting::lock_kind fenced_lock_kind{{.acquire = acquire,
                                                     .acquire_call = acquire_call,
                                                     .read_acquire = read_acquire,
                                                     .channel = waiting::plain_lock::channel,
                                                     .wakes = waiting::lock_message_wakes},
                                                    waiting::plain_lock::hold("fenced lock"),
                                                    waiting::plain_lock::force_release,
                                                    waiting::plain_lock::force_release_call};

}  // namespace relock::detail::locks
