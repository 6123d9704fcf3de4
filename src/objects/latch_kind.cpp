// SPDX-License-Identifier: Apache-2.0
// The count-down latch's await (data-layout §7) as a lock_kind table: a try reads the count
// (open when absent or 0), grants nothing and so has nothing to take back. Any message on the
// channel makes every awaiter look again. A closed latch is looked at again every second (the
// holder-TTL-less recheck), so a lost message costs at most that.
#include "objects/lock_kind.hpp"
#include "objects/naming.hpp"
#include "objects/sync_scripts.hpp"

namespace relock::detail {
namespace {

std::string channel(std::string_view key) { return objects::latch_channel(key); }
std::string waiter_channel(std::string_view key, std::string_view) { return channel(key); }
std::string field(std::string_view) { return {}; }

script_call await_call(const acquire_context& c) { return {{std::string(c.key)}, {}}; }

// Every message makes every awaiter look again: "0" is the count reaching zero, and Redisson's
// delete() publishes "1" (a new count's message) when it opens the latch.
std::size_t latch_message_wakes(std::string_view) { return pubsub::wake_all; }

// Never used: an await holds nothing to release (the table must name the calls).
script_call no_release_call(const release_context& c) { return {{std::string(c.key)}, {}}; }
script_call no_force_release_call(const force_release_context& c) {
  return {{std::string(c.key)}, {}};
}
void renew_nothing(std::string_view, std::string_view, std::int64_t, std::vector<std::string>&,
                   std::vector<std::string>&) {}

}  // namespace

const lock_kind latch_kind = {.what = "latch",
                              .acquire = sync_scripts::latch_await,
                              .release = sync_scripts::latch_await,
                              .force_release = sync_scripts::latch_await,
                              .renew = {sync_scripts::latch_await, renew_nothing},
                              .field = field,
                              .channel = channel,
                              .waiter_channel = waiter_channel,
                              .acquire_call = await_call,
                              .read_acquire = read_lock_reply,
                              .release_call = no_release_call,
                              .force_release_call = no_force_release_call,
                              .wakes = latch_message_wakes,
                              .ownerless = true};

}  // namespace relock::detail
