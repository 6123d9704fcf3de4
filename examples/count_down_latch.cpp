// SPDX-License-Identifier: Apache-2.0
// Count-down latch: Redisson's RCountDownLatch. It opens, for every awaiter in every process,
// when its count reaches zero: here a coordinator waits for three workers to be ready.
// Run: ./count_down_latch [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <asio/use_future.hpp>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <syncstream>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
    relock::client coordinator({.url = url}), workers({.url = url});  // as two processes

    auto ready = coordinator.count_down_latch("example:ready");
    // Sets the count only when the latch is open (its name holds nothing).
    if (!ready.try_set_count(3))
      throw std::runtime_error(
          "\"example:ready\" is already counting down (delete_latch opens it)");

    // An async awaiter too: any completion token; with use_future, get() gives `opened`.
    auto async_opened = ready.async_await(10s, {}, asio::use_future);

    std::vector<std::jthread> started;
    for (int i = 1; i <= 3; ++i) {
      started.emplace_back([&workers, i] {
        // ... the worker's start-up ...
        std::osyncstream(std::cout) << "worker " << i << " is ready\n";  // one line at a time
        workers.count_down_latch("example:ready").count_down();
      });
    }

    // Waits at most 10 s: false when the latch is still closed then.
    if (!ready.await(10s)) throw std::runtime_error("the workers were not ready in 10 s");
    if (!async_opened.get()) throw std::runtime_error("the async awaiter was not woken");
    std::cout << "all 3 workers ready; both awaiters woke, count " << ready.count() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "count_down_latch: " << e.what() << "\n";
    return 1;
  }
}
