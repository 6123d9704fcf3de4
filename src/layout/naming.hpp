// SPDX-License-Identifier: Apache-2.0
// Key and channel names of the Redisson data layout (docs/data-layout.md §1-§7). Every derived
// name keeps the main key's hash tag, so a script touching several of them stays in one slot.
//
// `name` is always the mapped name (after the client's name mapper), exactly the main key.
// Pure functions of their arguments: safe from any thread.
//
// One edge is inherited from Redisson on purpose: a name holding a '{' with no usable tag after
// it ("a{}b", "a{b") keeps its own whole-key slot, but its prefixed/suffixed names hash whole
// too and land elsewhere; in Cluster a script over both fails with CROSSSLOT. Changing the rule
// would break compatibility with Java clients sharing those names.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace relock::layout {

// Throws relock::error(errc::invalid_argument) for an empty name or one over 64 KiB; `what`
// names it in the message ("lock name").
void check_name(std::string_view name, const char* what);

// In a cluster, a script must touch keys of one slot: throws relock::error(invalid_argument)
// when a derived name (`derived`: a channel, a latch...) does not share `key`'s slot, which
// happens only for the edge above ("a{b", "a{}b"). Nothing has been written when it throws.
void check_one_slot(std::string_view key, std::initializer_list<std::string_view> derived);

// prefix + ":" + name when name contains '{', else prefix + ":{" + name + "}".
std::string prefixed(std::string_view prefix, std::string_view name);
// name + ":" + suffix when name contains '{', else "{" + name + "}:" + suffix.
std::string suffixed(std::string_view name, std::string_view suffix);

// §2 mutex family: where a full release publishes `0`.
std::string lock_channel(std::string_view name);
// §1 Unlock idempotency latch of one release request.
std::string unlock_latch_key(std::string_view name, std::string_view request_id);
// The same with a fresh random_request_id().
std::string random_unlock_latch_key(std::string_view name);

// §3 Fair lock: the waiting owners in order, their deadlines, and the channel of one waiter.
std::string fair_queue_key(std::string_view name);
std::string fair_timeout_key(std::string_view name);
std::string fair_waiter_channel(std::string_view name, std::string_view owner);

// §4 Read-write lock. The timeout prefix gets ":<n>" appended per read hold by the scripts;
// the key prefix is what the read-release script rebuilds other owners' timeout keys from
// (`<key prefix>:<owner>:rwlock_timeout:<n>`), so both must agree with `suffixed`.
std::string rwlock_channel(std::string_view name);
std::string rwlock_timeout_prefix(std::string_view name, std::string_view owner);
std::string rwlock_key_prefix(std::string_view name);

// §5 Fenced lock: the token counter, never expired, never reset.
std::string fenced_token_key(std::string_view name);

// §7 Semaphores and the count-down latch.
std::string semaphore_channel(std::string_view name);
std::string semaphore_timeout_key(std::string_view name);
// Literal braces around the name, whatever it holds: that is what Redisson subscribes to.
std::string latch_channel(std::string_view name);

// §9 Delayed queue over the destination `name`: the arrival list, the due-time set, the channel.
std::string delayed_queue_list(std::string_view name);
std::string delayed_queue_timeouts(std::string_view name);
std::string delayed_queue_channel(std::string_view name);

}  // namespace relock::layout
