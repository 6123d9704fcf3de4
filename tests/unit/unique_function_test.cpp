// SPDX-License-Identifier: Apache-2.0
// relock's move-only function: small callables stored inline, large ones on the heap, both
// moved, called and destroyed exactly once.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

#include <relock/detail/unique_function.hpp>

using relock::detail::unique_function;

namespace {

// Counts its live copies, so a leak or a double destruction shows.
struct tracked {
  explicit tracked(int* live) : live(live) { ++*live; }
  tracked(tracked&& o) noexcept : live(o.live) { ++*live; }
  tracked(const tracked&) = delete;
  ~tracked() { --*live; }
  int* live;
};

}  // namespace

TEST(unique_function, a_small_move_only_callable_moves_and_runs_once_destroyed) {
  int live = 0;
  {
    unique_function<int(int)> f = [t = tracked(&live), p = std::make_unique<int>(40)](int x) {
      return *p + x;
    };
    EXPECT_EQ(live, 1);
    unique_function<int(int)> g = std::move(f);
    EXPECT_FALSE(f);
    EXPECT_EQ(live, 1);
    EXPECT_EQ(g(2), 42);
    unique_function<int(int)> h;
    h = std::move(g);
    EXPECT_EQ(h(1), 41);
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

TEST(unique_function, a_large_callable_lives_on_the_heap_and_behaves_the_same) {
  int live = 0;
  {
    std::array<char, 256> big{};
    big[200] = 'z';
    unique_function<char()> f = [t = tracked(&live), big] { return big[200]; };
    unique_function<char()> g = std::move(f);
    EXPECT_EQ(live, 1);
    EXPECT_EQ(g(), 'z');
    g = nullptr;
    EXPECT_EQ(live, 0);
    EXPECT_FALSE(g);
  }
  EXPECT_EQ(live, 0);
}

TEST(unique_function, assigning_over_a_held_callable_destroys_the_old_one) {
  int first = 0, second = 0;
  unique_function<void()> f = [t = tracked(&first)] {};
  f = unique_function<void()>([t = tracked(&second)] {});
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  std::string out;
  f = [&out, s = std::string(100, 'q')] { out = s; };
  EXPECT_EQ(second, 0);
  f();
  EXPECT_EQ(out.size(), 100u);
}
