// SPDX-License-Identifier: Apache-2.0
// relock in one program: a blocking lock, a timed try, and the async API.
// Build: c++ -std=c++20 quickstart.cpp -o quickstart $(pkg-config --cflags --libs relock)
// Run:   RELOCK_URL=redis://127.0.0.1:6379 ./quickstart
#include <relock/client.hpp>

#include <asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <mutex>

using namespace std::chrono_literals;

int main() {
  const char* url = std::getenv("RELOCK_URL");
  try {
    relock::client client({.url = url ? url : "redis://127.0.0.1:6379"});
    auto lock = client.lock("orders:42");  // Redisson's RLock "orders:42"

    {
      std::unique_lock guard(lock);  // waits; the watchdog keeps the hold alive
      // ... critical section, across every process that locks "orders:42" ...
    }  // unlocked; the next waiter is woken by pub/sub

    if (lock.try_lock(2s, 10s)) {  // wait at most 2 s; the hold expires after 10 s
      // ...
      lock.unlock();
    }

    // Async: any Asio completion token, and an explicit owner, since the continuation may run
    // on another thread. A callback, and a promise that main waits on before the client goes.
    auto me = relock::owner::unique();
    std::promise<std::error_code> done;
    lock.async_lock(me, {}, [&](std::error_code locked) {
      if (locked) {
        done.set_value(locked);
        return;
      }
      // ... critical section ...
      lock.async_unlock(me, [&](std::error_code unlocked) { done.set_value(unlocked); });
    });
    if (auto ec = done.get_future().get()) {
      std::cerr << "async lock/unlock: " << ec.message() << "\n";
      return 1;
    }

    // The same with asio::use_future: get() waits, and throws std::system_error on failure.
    lock.async_lock(me, {.wait = 2s}, asio::use_future).get();
    lock.async_unlock(me, asio::use_future).get();

    std::cout << "quickstart: locked and unlocked \"" << lock.name() << "\" four ways\n";
  } catch (const std::system_error& e) {  // relock::error is one: the server is down...
    std::cerr << "quickstart: " << e.what() << "\n";
    return 1;
  }
}
