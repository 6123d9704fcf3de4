// SPDX-License-Identifier: Apache-2.0
// relock demo-worker (hidden): one of the demo's processes. Increments the shared counter file
// non-atomically, under the lock, and records when it held it.
#include <mutex>
#include <thread>

#include "cli.hpp"
#include "demo.hpp"

namespace relock_cli {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int demo_worker(const global_options& g, const demo_options& o) {
  auto settings = make_config(g);
  settings.log = nullptr;  // the demo said it once: not once more per worker
  auto client = connect(g, std::move(settings));
  auto lock = client.lock(demo::lock_name(o.prefix));
  std::string holds;
  try {
    for (int i = 0; i < o.iterations; ++i) {
      std::unique_lock guard(lock);
      const auto acquired = now_ns();
      const std::int64_t n = demo::read_counter(o.dir);
      // Without the lock, another process would read the same value in this gap and one of
      // the two increments would be lost.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      demo::write_counter(o.dir, o.worker_index, n + 1);
      // Taken before the release starts: a handoff is the whole way from "done" to the next
      // holder's first instruction, release and wake-up included.
      holds += std::to_string(o.worker_index) + ' ' + std::to_string(acquired) + ' ' +
               std::to_string(now_ns()) + '\n';
    }
  } catch (const relock::error& e) {
    fail_with(g, e, "demo worker " + std::to_string(o.worker_index));
  }
  demo::write_holds(o.dir, o.worker_index, holds);
  return exit_ok;
}

}  // namespace relock_cli
