// SPDX-License-Identifier: Apache-2.0
// How many heap allocations an uncontended lock/unlock pair costs once the client is warm
// (issue #36): every operator new in the process is counted, relock's I/O thread included,
// while a fixed number of pairs runs. Its own executable, since it replaces the global
// operator new. The figures are ceilings that only go down: a change that allocates more on
// the steady-state path fails here, and one that allocates less lowers them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <new>

#include <relock/client.hpp>

#include "support/client_settings.hpp"
#include "support/redis_server.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* counted_aligned(std::size_t n, std::align_val_t al) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  auto a = static_cast<std::size_t>(al);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, std::align_val_t al) { return counted_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return counted_aligned(n, al); }
// Every form, the nothrow ones included: one left to the sanitizer's operator new would hand
// us memory to free() that it allocated its own way (ASan reports alloc-dealloc-mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return counted_aligned(n, al);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return counted_aligned(n, al);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace relock::test {
namespace {

constexpr int warm_up_pairs = 200;
constexpr int counted_pairs = 1'000;
// Measured 104 per pair before issue #36's first cuts, 59 to 60 after, 45 to 46 after the
// second, 42 to 43 since the reader builds replies in place, 25 (blocking) and 28 (async) since
// operations keep their state in cached blocks, 14 and 17 since script calls keep their keys
// and arguments encoded, replies are lent and request buffers reused, 12 and 15 since unlock
// latches wait to share a DEL (RelWithDebInfo; check ASan's Debug build before lowering): the
// ceiling leaves room for a Debug build's differences. Lower it as allocations go.
constexpr double ceiling = 22.0;

// Allocations per pair while `pairs(n)` runs n pairs, after a warm-up of the same.
template <class Pairs>
double allocations_per_pair(Pairs pairs) {
  pairs(warm_up_pairs);
  allocations = 0;
  counting = true;
  pairs(counted_pairs);
  counting = false;
  double per_pair = double(allocations.load()) / counted_pairs;
  std::printf("allocations per pair: %.2f\n", per_pair);
  return per_pair;
}

TEST(steady_state_allocations, a_synchronous_pair) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("alloc-sync");
  double per_pair = allocations_per_pair([&](int n) {
    for (int i = 0; i < n; ++i) {
      lk.lock();
      lk.unlock();
    }
  });
  EXPECT_LE(per_pair, ceiling);
}

// Chained on relock's I/O thread, as bench/'s async variant does: no caller thread involved.
TEST(steady_state_allocations, an_asynchronous_pair) {
  redis_server server;
  relock::client client(settings_for(server));
  auto lk = client.lock("alloc-async");
  auto me = relock::owner::unique();
  double per_pair = allocations_per_pair([&](int n) {
    std::promise<void> done;
    int left = n;
    std::function<void()> next = [&] {
      if (left-- == 0) return done.set_value();
      lk.async_lock(me, {}, [&](std::error_code ec) {
        ASSERT_FALSE(ec);
        lk.async_unlock(me, [&](std::error_code ec2) {
          ASSERT_FALSE(ec2);
          next();
        });
      });
    };
    next();
    done.get_future().get();
  });
  EXPECT_LE(per_pair, ceiling);
}

}  // namespace
}  // namespace relock::test
