// SPDX-License-Identifier: Apache-2.0
// The count-down latch's await (data-layout §7), a grant alone: a try reads the count (open when
// absent or 0), grants nothing, and so has nothing to release, renew or take back. Any message
// on the channel makes every awaiter look again. A closed latch is looked at again every second
// (the holder-TTL-less recheck), so a lost message costs at most that.
#include "layout/naming.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "synchronizers/synchronizer_scripts.hpp"

namespace relock::detail::synchronizers {
namespace {

std::string channel(std::string_view key) { return layout::latch_channel(key); }

waiting::script_call await_call(const waiting::acquire_context& c) { return {{c.key}, {}}; }

// Every message makes every awaiter look again: "0" is the count reaching zero, and Redisson's
// delete() publishes "1" (a new count's message) when it opens the latch.
std::size_t latch_message_wakes(std::string_view) { return pubsub::wake_all; }

}  // namespace

constinit const waiting::grant_kind latch_grant{.acquire = synchronizer_scripts::latch_await,
                                                .acquire_call = await_call,
                                                .read_acquire = waiting::read_lock_reply,
                                                .channel = channel,
                                                .wakes = latch_message_wakes,
                                                .what_granted = "latch"};

}  // namespace relock::detail::synchronizers
