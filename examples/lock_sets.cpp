// SPDX-License-Identifier: Apache-2.0
// Lock sets: relock::multi_lock holds several locks as one (Redisson's RedissonMultiLock), all
// or none. Its members may be any kind of lock, on one client or several.
//
// relock::red_lock is built the same way, from one lock per independent Redis server (three or
// more), and holds a majority of them:
//   relock::red_lock red({a.lock("job"), b.lock("job"), c.lock("job")});  // a, b, c: clients
//   if (red.acquire({.lease = 10s, .wait = 3s}).acquired) { ...; red.unlock(); }
// It refuses two members on one server, so it is not shown here against a single server.
// Run: ./lock_sets [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <chrono>
#include <functional>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    relock::client client({.url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379"});
    auto alice = client.lock("example:account:alice");
    auto bob = client.lock("example:account:bob");

    // All or none: while another thread holds bob, the set gives up and holds neither.
    {
      std::scoped_lock holding_bob(bob);
      bool got_both = true, alice_taken = true;
      std::thread([&] {
        relock::multi_lock both(alice, bob);
        got_both = both.try_lock(200ms);
        if (got_both) both.unlock();
        alice_taken = alice.is_locked();
      }).join();
      if (got_both || alice_taken) throw std::runtime_error("the set held a part of itself");
      std::cout << "with bob held elsewhere, the set waited 200 ms and took nothing\n";
    }

    // Two threads take the pair in opposite orders: the set always acquires in one order of
    // its own, so neither can deadlock the other. The two balances are guarded by the pair.
    int alice_balance = 100, bob_balance = 100;
    auto transfer = [](relock::multi_lock pair, int& from, int& to) {
      for (int i = 0; i < 20; ++i) {
        std::scoped_lock guard(pair);  // waits for both, as one lock
        --from;
        ++to;
      }
    };
    std::thread to_bob(transfer, relock::multi_lock(alice, bob), std::ref(alice_balance),
                       std::ref(bob_balance));
    std::thread to_alice(transfer, relock::multi_lock(bob, alice), std::ref(bob_balance),
                         std::ref(alice_balance));
    to_bob.join();
    to_alice.join();
    if (alice_balance != 100 || bob_balance != 100) throw std::runtime_error("a transfer was lost");
    std::cout << "20 transfers each way, locking in opposite orders: no deadlock, balances "
              << alice_balance << " and " << bob_balance << "\n";
  } catch (const std::exception& e) {
    std::cerr << "lock_sets: " << e.what() << "\n";
    return 1;
  }
}
