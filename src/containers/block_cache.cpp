// SPDX-License-Identifier: Apache-2.0
#include "containers/block_cache.hpp"

#include <array>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RELOCK_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define RELOCK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define RELOCK_POISON(p, n) ((void)(p), (void)(n))
#define RELOCK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace relock::containers {
namespace {

struct free_block {
  free_block* next;
};

// One thread's blocks. Its destructor runs at the thread's end; a block freed after that (by
// another thread-local's destructor) goes straight back to the heap.
struct thread_blocks {
  std::array<free_block*, block_cache::classes> heads{};
  std::array<std::size_t, block_cache::classes> counts{};

  ~thread_blocks();
};

thread_local bool blocks_gone = false;  // trivially destructible: readable to the very end
thread_local thread_blocks blocks;

constexpr std::size_t block_size(std::size_t cls) { return (cls + 1) * block_cache::granularity; }

thread_blocks::~thread_blocks() {
  blocks_gone = true;
  for (std::size_t c = 0; c < block_cache::classes; ++c) {
    while (free_block* b = heads[c]) {
      RELOCK_UNPOISON(b, block_size(c));
      heads[c] = b->next;
      ::operator delete(b);
    }
  }
}

// The class of a block of `bytes`, or `classes` when it is too large to keep.
constexpr std::size_t class_of(std::size_t bytes) {
  return bytes == 0 ? 0 : (bytes - 1) / block_cache::granularity;
}

}  // namespace

void* block_cache::allocate(std::size_t bytes) {
  const std::size_t c = class_of(bytes);
  if (c >= classes) return ::operator new(bytes);
  // Always the class's whole size: another thread may keep the block once it is freed.
  if (blocks_gone) return ::operator new(block_size(c));
  if (free_block* b = blocks.heads[c]) {
    RELOCK_UNPOISON(b, block_size(c));
    blocks.heads[c] = b->next;
    --blocks.counts[c];
    return b;
  }
  return ::operator new(block_size(c));
}

void block_cache::deallocate(void* block, std::size_t bytes) noexcept {
  const std::size_t c = class_of(bytes);
  if (c >= classes || blocks_gone || blocks.counts[c] >= kept) {
    ::operator delete(block);
    return;
  }
  auto* b = static_cast<free_block*>(block);
  b->next = blocks.heads[c];
  blocks.heads[c] = b;
  ++blocks.counts[c];
  RELOCK_POISON(b, block_size(c));
}

}  // namespace relock::containers
