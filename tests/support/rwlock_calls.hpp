// SPDX-License-Identifier: Apache-2.0
// The read-write lock's scripts on one name, called with exactly the keys and arguments its kind
// tables send (src/locks/rwlock_kind.cpp), for tests that check the scripts' data directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "locks/lock_kinds.hpp"
#include "support/sync_calls.hpp"
#include "waiting/lock_kind.hpp"

namespace relock::test {

class rwlock_calls {
 public:
  rwlock_calls(exec::executor& ex, std::string name) : ex_(ex), name_(std::move(name)) {}

  result read(const std::string& owner, std::int64_t lease) {
    return acquire(detail::locks::rwlock_read_kind, owner, lease);
  }
  result write(const std::string& owner, std::int64_t lease) {
    return acquire(detail::locks::rwlock_write_kind, owner, lease);
  }
  // A release under the latch of `request` (a fresh one unless given: a resend reuses it).
  result read_release(const std::string& owner,
                      const std::string& request = layout::random_request_id()) {
    return release(detail::locks::rwlock_read_kind, owner, 0, request);
  }
  result write_release(const std::string& owner, std::int64_t lease,
                       const std::string& request = layout::random_request_id()) {
    return release(detail::locks::rwlock_write_kind, owner, lease, request);
  }
  result force() {
    const auto& k = detail::locks::rwlock_write_kind;
    auto call = k.force_release_call({name_, channel(), "PUBLISH"});
    return eval(ex_, k.force_release, std::move(call.keys), std::move(call.args));
  }
  // Renews `owner`'s read hold (with `holds` timeout keys) or write hold on this name, as a
  // watchdog batch of one.
  result renew_read(const std::string& owner, std::int64_t holds, std::int64_t lease) {
    return renew(detail::locks::rwlock_read_kind, owner, holds, lease);
  }
  result renew_write(const std::string& owner, std::int64_t lease) {
    return renew(detail::locks::rwlock_write_kind, owner, 1, lease);
  }

  std::string timeout_key(const std::string& owner, int n) const {
    return layout::rwlock_timeout_prefix(name_, owner) + ":" + std::to_string(n);
  }
  std::string latch(const std::string& request) const {
    return layout::unlock_latch_key(name_, request);
  }
  std::string channel() const { return detail::locks::rwlock_read_kind.channel(name_); }
  const std::string& name() const { return name_; }

  static constexpr std::chrono::milliseconds latch_ttl{20'000};

 private:
  result acquire(const detail::waiting::lock_kind& k, const std::string& owner,
                 std::int64_t lease) {
    auto call = k.acquire_call({name_, owner, std::chrono::milliseconds(lease)});
    return eval(ex_, k.acquire, std::move(call.keys), std::move(call.args));
  }
  result release(const detail::waiting::lock_kind& k, const std::string& owner, std::int64_t lease,
                 const std::string& request) {
    const std::string ch = channel(), latch_key = latch(request);
    auto call = k.release_call(detail::waiting::release_context{
        name_, owner, ch, latch_key, "PUBLISH", std::chrono::milliseconds(lease), latch_ttl});
    return eval(ex_, k.release, std::move(call.keys), std::move(call.args));
  }

  result renew(const detail::waiting::lock_kind& k, const std::string& owner, std::int64_t holds,
               std::int64_t lease) {
    std::vector<std::string> keys, args{std::to_string(lease)};
    k.renew.append(name_, owner, holds, keys, args);
    return eval(ex_, k.renew.script, std::move(keys), std::move(args));
  }

  exec::executor& ex_;
  std::string name_;
};

}  // namespace relock::test
