// SPDX-License-Identifier: Apache-2.0
// The synchronizers' kinds (data-layout §7): their tries wait through the same loop as a lock's,
// but they take only the parts they have (lock_kind.hpp). An option of the object (whether a
// semaphore with no count waits for one) picks one of the kind's constants here, so callers
// never choose between globals.
#pragma once

#include "waiting/lock_kind.hpp"

namespace relock::detail::synchronizers {

// A semaphore's message is its new count: permits for that many waiters' demands (none when 0 or
// less; every waiter for a payload that is not a count).
std::size_t semaphore_message_wakes(std::string_view payload);

// A semaphore's try for its permits (semaphore_kind.cpp): a grant nobody holds, taken back
// under the try's latch when its reply is lost. `wait_when_absent`: a name with no count waits
// for one instead of refusing with errc::not_initialized (semaphore_options::wait_when_absent).
const waiting::grant_kind& semaphore_grant(bool wait_when_absent);
// Permits going back, whoever took them, under an unlock latch.
extern const waiting::release_kind semaphore_release;

// A permit-expirable semaphore's try for a permit (permit_semaphore_kind.cpp): a hold whose
// owner is the permit's id, released and renewed as permit_hold says.
const waiting::grant_kind& permit_grant(bool wait_when_absent);
extern const waiting::hold_kind permit_hold;

// A latch's await (latch_kind.cpp): a try that reads the count and grants nothing.
extern const waiting::grant_kind latch_grant;

}  // namespace relock::detail::synchronizers
