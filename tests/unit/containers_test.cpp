// SPDX-License-Identifier: Apache-2.0
// The containers that let a steady flow of requests, holds and operations run without
// allocating: a vector-backed FIFO, a store of spare map nodes, and a per-thread block cache.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "containers/block_cache.hpp"
#include "containers/fifo.hpp"
#include "containers/spare_nodes.hpp"

using relock::containers::block_cache;
using relock::containers::fifo;
using relock::containers::make_cached;
using relock::containers::spare_nodes;

namespace {

std::vector<int> contents(fifo<int>& q) { return {q.begin(), q.end()}; }

}  // namespace

TEST(fifo, gives_elements_back_in_the_order_they_came) {
  fifo<std::unique_ptr<int>> q;  // move-only elements, as a connection's requests are
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < 5; ++i) q.push_back(std::make_unique<int>(i));
  EXPECT_EQ(q.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    auto taken = std::move(q.front());
    q.pop_front();
    EXPECT_EQ(*taken, i);
  }
  EXPECT_TRUE(q.empty());
}

TEST(fifo, push_front_goes_ahead_of_everything_queued) {
  fifo<int> q;
  q.push_front(1);  // into an empty queue
  q.push_back(2);
  q.push_front(0);  // no room before the head: inserted
  EXPECT_EQ(contents(q), (std::vector<int>{0, 1, 2}));
  q.pop_front();
  q.push_front(9);  // reuses the slot the pop left
  EXPECT_EQ(contents(q), (std::vector<int>{9, 1, 2}));
}

TEST(fifo, erase_takes_one_element_out_of_the_middle) {
  fifo<int> q;
  for (int i = 0; i < 4; ++i) q.push_back(i);
  q.pop_front();
  auto it = q.erase(q.begin() + 1);
  EXPECT_EQ(*it, 3);
  EXPECT_EQ(contents(q), (std::vector<int>{1, 3}));
}

TEST(fifo, a_queue_that_never_drains_keeps_its_order_and_its_size_bounded) {
  fifo<int> q;
  int next_in = 0, next_out = 0;
  for (int i = 0; i < 40; ++i) q.push_back(next_in++);
  for (int round = 0; round < 10'000; ++round) {
    q.push_back(next_in++);
    ASSERT_EQ(q.front(), next_out++);
    q.pop_front();
  }
  EXPECT_EQ(q.size(), 40u);
  std::vector<int> expected;
  for (int i = next_out; i < next_in; ++i) expected.push_back(i);
  EXPECT_EQ(contents(q), expected);
}

TEST(fifo, a_moved_from_queue_is_empty_and_usable) {
  fifo<int> q;
  for (int i = 0; i < 3; ++i) q.push_back(i);
  q.pop_front();
  fifo<int> taken = std::move(q);
  EXPECT_EQ(contents(taken), (std::vector<int>{1, 2}));
  EXPECT_TRUE(q.empty());  // a moved-from queue is specified: empty
  EXPECT_EQ(q.size(), 0u);
  q.push_back(7);
  EXPECT_EQ(contents(q), (std::vector<int>{7}));
  fifo<int> again;
  again.push_back(5);
  again = std::move(taken);
  EXPECT_EQ(contents(again), (std::vector<int>{1, 2}));
  EXPECT_TRUE(taken.empty());
}

TEST(spare_nodes, a_node_kept_comes_back_with_its_key_buffer) {
  std::map<std::string, int> m{{std::string(100, 'k'), 1}};
  spare_nodes<std::map<std::string, int>> spares;
  EXPECT_FALSE(spares.take());  // none kept yet
  const char* buffer = m.begin()->first.data();
  spares.keep(m, m.begin());
  EXPECT_TRUE(m.empty());
  auto node = spares.take();
  ASSERT_TRUE(node);
  EXPECT_EQ(node.key().data(), buffer);
  node.key().assign(50, 'x');  // fits: the same buffer, no allocation
  EXPECT_EQ(node.key().data(), buffer);
  m.insert(std::move(node));
  EXPECT_EQ(m.at(std::string(50, 'x')), 1);
  EXPECT_FALSE(spares.take());
}

TEST(spare_nodes, keeps_at_most_its_bound_and_gives_the_last_kept_first) {
  std::unordered_map<int, int> m;
  for (int i = 0; i < 5; ++i) m.emplace(i, i);
  spare_nodes<std::unordered_map<int, int>, 3> spares;
  for (int i = 0; i < 5; ++i) spares.keep(m, m.find(i));
  EXPECT_TRUE(m.empty());
  std::vector<int> back;
  while (auto node = spares.take()) back.push_back(node.key());
  EXPECT_EQ(back, (std::vector<int>{2, 1, 0}));
}

TEST(spare_nodes, serves_a_set_too) {
  std::unordered_set<int> s{1};
  spare_nodes<std::unordered_set<int>> spares;
  spares.keep(s, s.find(1));
  auto node = spares.take();
  ASSERT_TRUE(node);
  node.value() = 2;
  s.insert(std::move(node));
  EXPECT_TRUE(s.contains(2));
  EXPECT_FALSE(s.contains(1));
}

TEST(block_cache, a_freed_block_is_the_next_one_of_its_size) {
  void* a = block_cache::allocate(100);
  block_cache::deallocate(a, 100);
  void* b = block_cache::allocate(120);  // the same class: 65 to 128 bytes
  EXPECT_EQ(b, a);
  void* c = block_cache::allocate(100);  // another block: `a` is taken
  EXPECT_NE(c, b);
  block_cache::deallocate(b, 120);
  block_cache::deallocate(c, 100);
}

TEST(block_cache, sizes_apart_and_too_large_ones_are_not_mixed) {
  void* small = block_cache::allocate(32);
  block_cache::deallocate(small, 32);
  void* other = block_cache::allocate(200);  // another class
  EXPECT_NE(other, small);
  constexpr std::size_t huge = block_cache::classes * block_cache::granularity + 1;
  void* big = block_cache::allocate(huge);  // passes through to the heap
  block_cache::deallocate(big, huge);
  block_cache::deallocate(other, 200);
  EXPECT_EQ(block_cache::allocate(32), small);
  block_cache::deallocate(small, 32);
}

TEST(block_cache, a_block_freed_on_another_thread_is_kept_there) {
  void* made_here = block_cache::allocate(64);
  void* reused_there = nullptr;
  std::thread([&] {
    block_cache::deallocate(made_here, 64);
    reused_there = block_cache::allocate(64);
    block_cache::deallocate(reused_there, 64);
  }).join();  // its cache, and the block, go with the thread
  EXPECT_EQ(reused_there, made_here);
}

TEST(block_cache, make_cached_reuses_the_block_of_a_shared_object_gone) {
  struct state {
    std::string text;
    int n = 0;
  };
  auto first = make_cached<state>(state{"first", 1});
  const void* where = first.get();
  first.reset();
  auto second = make_cached<state>(state{"second", 2});
  EXPECT_EQ(static_cast<const void*>(second.get()), where);
  EXPECT_EQ(second->text, "second");
  std::weak_ptr<state> watch = second;
  second.reset();
  EXPECT_TRUE(watch.expired());
}
