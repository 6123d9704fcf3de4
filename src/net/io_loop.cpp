#include "net/io_loop.hpp"

#include <sched.h>

namespace relock::net {

void run_io_loop(asio::io_context& io, std::chrono::microseconds busy_poll,
                 const std::function<bool()>& awaiting_replies) {
  if (busy_poll.count() <= 0) {
    io.run();
    return;
  }
  using clock = std::chrono::steady_clock;
  auto last_event = clock::now();
  while (!io.stopped()) {
    if (io.poll() > 0) {
      last_event = clock::now();
    } else if (clock::now() - last_event < busy_poll && awaiting_replies()) {
      ::sched_yield();  // let the threads that share this CPU run
    } else {
      io.run_one();  // sleep until the next event
      last_event = clock::now();
    }
  }
}

}  // namespace relock::net
