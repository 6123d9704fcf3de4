// SPDX-License-Identifier: Apache-2.0
// Fenced lock: Redisson's RFencedLock. Every acquisition gets a fencing token that only grows,
// and the guarded resource refuses writes with a token lower than one it has seen: a holder
// that stalled past its lease, and lost the lock without knowing, cannot overwrite its successor.
// Run: ./fenced_lock [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;

// The resource the lock guards. In real life a database row or a file store that keeps the
// highest token it has accepted (e.g. UPDATE ... SET fence = :token WHERE fence <= :token).
class fenced_store {
 public:
  bool write(std::int64_t token, const std::string& value) {
    std::scoped_lock guard(mutex_);
    if (token < highest_) return false;  // a stale holder: refused
    highest_ = token;
    value_ = value;
    return true;
  }
  std::string value() {
    std::scoped_lock guard(mutex_);
    return value_;
  }

 private:
  std::mutex mutex_;
  std::int64_t highest_ = 0;
  std::string value_;
};

int main(int argc, char** argv) {
  try {
    const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
    relock::client service_a({.url = url}), service_b({.url = url});  // two services, one lock
    fenced_store store;

    // A takes the lock with a 1 s lease, then stalls (a GC pause, a swapped-out process). A
    // holder that re-enters takes new tokens; fence() gives its hold's first one to write with.
    auto a_lock = service_a.fenced_lock("example:fenced");
    std::int64_t a_token = a_lock.lock_and_get_token(1s);

    // Meanwhile B waits; A's lease runs out, B gets the lock with a larger token and writes.
    bool b_wrote = false;
    std::thread([&] {
      auto b_lock = service_b.fenced_lock("example:fenced");
      std::int64_t b_token = b_lock.lock_and_get_token();  // waits for A's lease to run out
      b_wrote = store.write(b_token, "written by B");
      std::cout << "B got token " << b_token << " and wrote\n";
      b_lock.unlock();
    }).join();
    if (!b_wrote) throw std::runtime_error("B's write was refused");

    // A wakes up, still believing it holds the lock. Its write carries the old token: refused.
    if (store.write(a_token, "written by A")) throw std::runtime_error("a stale write got in");
    std::cout << "A's write with token " << a_token << " was refused; the store holds \""
              << store.value() << "\"\n";

    std::error_code ec;
    a_lock.unlock(ec);  // and the lock tells A its hold had expired
    std::cout << "A's unlock: " << ec.message() << "\n";
    if (ec != relock::errc::lock_lost) throw std::runtime_error("A's hold was not reported lost");
  } catch (const std::exception& e) {
    std::cerr << "fenced_lock: " << e.what() << "\n";
    return 1;
  }
}
