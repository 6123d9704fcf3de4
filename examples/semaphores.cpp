// SPDX-License-Identifier: Apache-2.0
// Semaphores: relock::semaphore is Redisson's RSemaphore, a count of permits shared by every
// process; relock::permit_expirable_semaphore (RPermitExpirableSemaphore) gives each permit an
// id and a lease, so a holder that dies gives its permit back when the lease ends. Both read like
// std::counting_semaphore, and both hand out relock::permit, which gives its permits back when it
// goes out of scope.
// Run: ./semaphores [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
    relock::client client({.url = url});

    // At most 2 renders at once, fleet-wide. try_set_permits sets the count only when the name
    // holds nothing: the first process to start sets it up, later ones find it there.
    auto slots = client.semaphore("example:render-slots");
    slots.try_set_permits(2);
    std::atomic<int> rendering = 0;
    std::atomic<bool> too_many = false;
    std::vector<std::jthread> renderers;
    for (int i = 0; i < 4; ++i) {
      renderers.emplace_back([&] {
        // Waits for a permit (a release wakes it); the permit goes back at the end of the scope,
        // even if the render throws. slots.acquire() and slots.release() do the same by hand.
        auto permit = slots.acquire_permits();
        if (++rendering > 2) too_many = true;
        std::this_thread::sleep_for(100ms);  // the render
        --rendering;
      });
    }
    renderers.clear();  // joins them
    if (too_many) throw std::runtime_error("more renders than permits at once");
    std::cout << "4 renders on 2 permits: never more than 2 at once\n";

    // One worker slot. A worker takes it with a 2 s lease and dies without releasing it.
    auto workers = client.permit_expirable_semaphore("example:worker-slots");
    workers.set_permits(1);  // available + taken = 1, whatever an earlier run left
    {
      relock::client doomed({.url = url});
      // detach(): nothing gives it back, as when a process crashes.
      std::string id = doomed.permit_expirable_semaphore(workers.name()).acquire(2s).detach();
      std::cout << "a worker took permit " << id << " and crashed\n";
    }  // its client is gone, the permit is still taken
    if (workers.try_acquire()) throw std::runtime_error("the taken permit was free");
    // Another worker waits: the permit comes back when its lease ends.
    auto next = workers.try_acquire_for(10s);
    if (!next) throw std::runtime_error("the dead worker's permit never came back");
    std::cout << "its permit came back after the lease; the next worker has " << next->id() << "\n";
    next->release();  // or at the end of its scope
  } catch (const std::exception& e) {
    std::cerr << "semaphores: " << e.what() << "\n";
    return 1;
  }
}
