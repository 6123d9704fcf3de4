// SPDX-License-Identifier: Apache-2.0
#include "net/io_loop.hpp"

#include <sched.h>

#include "net/poll_policy.hpp"

namespace relock::net {

void run_io_loop(asio::io_context& io, std::chrono::microseconds busy_poll,
                 const std::function<bool()>& awaiting_replies) {
  if (busy_poll.count() <= 0) {
    io.run();
    return;
  }
  using clock = std::chrono::steady_clock;
  poll_policy policy(busy_poll);
  auto last_event = clock::now();
  while (!io.stopped()) {
    if (io.poll() > 0) {
      policy.event();
      last_event = clock::now();
      continue;
    }
    if (io.stopped()) break;
    const auto since =
        std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - last_event);
    if (policy.keep_polling(awaiting_replies(), since)) {
      ::sched_yield();  // let the threads that share this CPU run
      continue;
    }
    io.run_one();  // sleep until the next event
    policy.event();
    last_event = clock::now();
  }
}

}  // namespace relock::net
