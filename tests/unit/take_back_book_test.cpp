// Take-backs per (key, owner), without a server: a try waits for every outstanding one of its
// owner on its key, whichever acquire sent them, and only for those.
#include <gtest/gtest.h>

#include <vector>

#include "objects/take_back_book.hpp"

using relock::detail::take_back_book;

TEST(take_back_book, a_try_waits_for_every_take_back_of_its_owner_on_its_key) {
  take_back_book book;
  const take_back_book::id x{"k", "x"};
  const take_back_book::id y{"k", "y"};
  book.begin(x);  // an earlier acquire's
  book.begin(x);  // this acquire's
  EXPECT_TRUE(book.pending(x));
  EXPECT_FALSE(book.pending(y));  // another owner is not held up
  std::vector<int> ran;
  book.after(x, [&] { ran.push_back(1); });
  EXPECT_TRUE(book.end(x).empty());  // one is still out
  auto ready = book.end(x);
  ASSERT_EQ(ready.size(), 1u);
  for (auto& then : ready) then();
  EXPECT_EQ(ran, (std::vector<int>{1}));
  EXPECT_FALSE(book.pending(x));
  EXPECT_EQ(book.size(), 0u);
}

TEST(take_back_book, an_answer_for_nothing_pending_changes_nothing) {
  take_back_book book;
  EXPECT_TRUE(book.end({"k", "x"}).empty());
  EXPECT_EQ(book.size(), 0u);
}
