// SPDX-License-Identifier: Apache-2.0
// Locks: relock::mutex is Redisson's RLock, a reentrant lock shared by every process (C++ or
// Java) that names it. Two threads contend for it; then a lease, inspect and the async API.
// Run: ./locks [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    relock::client client({.url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379"});
    auto lock = client.lock("example:locks");

    // A hold belongs to the calling thread, as with std::mutex: another thread waits.
    {
      std::scoped_lock guard(lock);  // no lease given: the watchdog renews it while held
      bool other_got_it = true;
      std::thread([&] {
        other_got_it = lock.try_lock_for(200ms);
        if (other_got_it) lock.unlock();
      }).join();
      if (other_got_it) throw std::runtime_error("two threads held the lock at once");
      std::cout << "a second thread waited 200 ms and gave up: the lock was held\n";
    }  // unlocked here

    // A lease: the hold ends after 10 s even if this process hangs, with no watchdog.
    lock.lock(10s);
    std::jthread waiter([&] {
      std::unique_lock guard(lock);  // blocks until main unlocks; the release wakes it
      std::cout << "the waiting thread got the lock once main let go\n";
    });
    // What Redis holds under the name, whoever wrote it (a Java service's hold shows too).
    relock::lock_info info = client.inspect(lock.name());
    if (!info.locked()) throw std::runtime_error("inspect found the lock free");
    std::cout << relock::to_string(info.kind) << " \"" << info.name << "\" held by "
              << info.holders.front().owner << ", " << info.remaining_lease->count()
              << " ms of its lease left\n";
    lock.unlock();
    waiter.join();

    // Async: any Asio completion token, and an explicit owner, since a continuation may run on
    // any thread. asio::use_future's get() throws std::system_error on failure.
    auto me = relock::owner::unique();
    auto rival = relock::owner::unique();
    lock.async_lock(me, {.wait = 5s}, asio::use_future).get();
    bool rival_got_it = lock.async_try_lock(rival, {}, asio::use_future).get();
    if (rival_got_it) throw std::runtime_error("two owners held the lock at once");
    // A callback runs on relock's I/O thread: keep it short, and never block there.
    std::promise<std::error_code> unlocked;
    lock.async_unlock(me, [&](std::error_code ec) { unlocked.set_value(ec); });
    if (auto ec = unlocked.get_future().get()) throw relock::error(ec);
    std::cout << "async: locked, refused a rival owner, unlocked\n";
  } catch (const std::exception& e) {  // relock::error: the server is down, a timeout...
    std::cerr << "locks: " << e.what() << "\n";
    return 1;
  }
}
