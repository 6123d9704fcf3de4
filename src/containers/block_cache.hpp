// SPDX-License-Identifier: Apache-2.0
// Freed blocks kept for reuse, per thread and per size class: the short-lived state of every
// operation (an executor call, an acquire, a release, a guarded completion) is made and freed
// on every lock and unlock, always in the same few sizes, so a steady flow of them allocates
// nothing once warm (issue #36; tests/allocations counts it).
//
// Each thread keeps its own blocks, so nothing here is shared between threads: a block made on
// one thread and freed on another joins the second one's cache (every block of a class has the
// class's size, whoever made it). A cache keeps at most `kept` blocks of a class and frees the
// rest; a thread's cache is freed when the thread ends. Under AddressSanitizer a kept block is
// poisoned, so a use after free still shows.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace relock::containers {

class block_cache {
 public:
  static constexpr std::size_t granularity = 64;  // class c holds blocks of (c + 1) * 64 bytes
  static constexpr std::size_t classes = 16;      // up to 1 KiB; larger ones pass through
  static constexpr std::size_t kept = 32;         // per class and thread

  static void* allocate(std::size_t bytes);
  static void deallocate(void* block, std::size_t bytes) noexcept;
};

// An allocator over block_cache, for std::allocate_shared (make_cached below).
template <class T>
struct cached_allocator {
  using value_type = T;

  cached_allocator() = default;
  template <class U>
  cached_allocator(const cached_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned: not cached");
    return static_cast<T*>(block_cache::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { block_cache::deallocate(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const cached_allocator<U>&) const noexcept {
    return true;
  }
};

// std::make_shared, its object and count in one block from the cache.
template <class T, class... Args>
std::shared_ptr<T> make_cached(Args&&... args) {
  return std::allocate_shared<T>(cached_allocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace relock::containers
