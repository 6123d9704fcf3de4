// SPDX-License-Identifier: Apache-2.0
// Read-write lock: Redisson's RReadWriteLock. Readers share it, a writer excludes everyone;
// it works with std::shared_lock and std::unique_lock as std::shared_timed_mutex does.
// Run: ./read_write_lock [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <chrono>
#include <cstddef>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    relock::client client({.url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379"});
    auto catalog = client.read_write_lock("example:catalog");

    std::shared_lock reading(catalog);  // the read side, held by this thread
    std::size_t readers_seen = 0;
    bool writer_got_in = true;
    std::thread([&] {
      // Another thread is another owner. It reads too, at once: readers share the lock.
      std::shared_lock also_reading(catalog, std::try_to_lock);
      if (also_reading) readers_seen = client.inspect(catalog.name()).holders.size();
    }).join();
    std::thread([&] {
      // A writer waits for every reader to leave: here it gives up after 200 ms.
      std::unique_lock writing(catalog, 200ms);
      writer_got_in = writing.owns_lock();
    }).join();
    if (readers_seen != 2 || writer_got_in) throw std::runtime_error("readers did not exclude");
    std::cout << "two readers shared \"" << catalog.name() << "\"; a writer waited and gave up\n";

    // A reader asking for the write side of its own lock would wait for itself for ever:
    // relock refuses at once (Redisson would hang). Release the read first, then write.
    try {
      catalog.write_lock().lock();
      throw std::runtime_error("a reader took the write side");
    } catch (const relock::error& e) {
      if (e.code() != relock::errc::would_deadlock) throw;
      std::cout << "upgrading read to write: " << e.code().message() << "\n";
    }
    reading.unlock();

    std::thread([&] {
      std::unique_lock writing(catalog);  // no readers left: the writer gets in
      std::cout << "the writer got in once the readers had left\n";
    }).join();
  } catch (const std::exception& e) {
    std::cerr << "read_write_lock: " << e.what() << "\n";
    return 1;
  }
}
