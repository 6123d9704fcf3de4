// SPDX-License-Identifier: Apache-2.0
// Releasing one hold: stop renewing first, then run the kind's release script under a fresh
// unlock latch (data-layout §1), then delete the latch.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <relock/detail/completion.hpp>

#include "waiting/lock_kind.hpp"

namespace relock::detail {
class client_core;  // the client's shared state (src/client_core.hpp)
}

namespace relock::detail::waiting {

struct release_request {
  std::string key;
  std::string channel;
  std::string owner;  // "<client-id>:<owner-id>"
  std::string field;  // the hold's hash field for the owner (none: a semaphore's permits)
  const release_kind* kind = nullptr;
  bool cleanup = false;      // relock's own undo of a grant: no local hold to count
  std::int64_t permits = 1;  // a semaphore's: how many go back
  // A take-back: the undo of a try whose reply was lost, under the try's own latch (`latch`).
  // The script leaves the latch even when it finds no hold, and it is never deleted early, so a
  // copy of this release or the try itself reaching Redis later changes nothing (data-layout §8).
  bool take_back = false;
  std::string latch{};                   // empty: a fresh one
  std::chrono::milliseconds timeout{0};  // above zero: overrides the cleanup's latch window
};

// (error, detail naming the lock and owner). not_owner: the owner held nothing; lock_lost: it
// held the lock, but the hold expired or was deleted.
using release_callback = completion<void(std::error_code, std::string)>;

// Any thread; the work and the callback happen on the I/O thread. A client shutting down
// completes it with errc::cancelled at once.
void start_release(std::shared_ptr<client_core> core, release_request request,
                   release_callback done);

// Whether a release's failure leaves it unknown or not run at all: Redis did not answer (timeout,
// lost connection), or refused to run it for now (a script past busy-reply-threshold: BUSY;
// over maxmemory: OOM; a restart: LOADING; a slot on its way...). Such a release is sent again
// (release_retry.hpp); any other answer says what the release did.
bool release_not_run(std::error_code ec, std::string_view detail);

// The same, from the I/O thread, even while the client shuts down: for relock's own cleanups
// (an acquire taking back what it may have taken).
void release_now(const std::shared_ptr<client_core>& core, release_request request,
                 release_callback done);

}  // namespace relock::detail::waiting
