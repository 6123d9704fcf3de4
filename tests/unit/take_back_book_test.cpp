// SPDX-License-Identifier: Apache-2.0
// The book of take-backs not yet answered: what a try of an owner on a key must send again first.
#include "waiting/take_back_book.hpp"

#include <gtest/gtest.h>

using relock::detail::waiting::release_request;
using relock::detail::waiting::take_back_book;

namespace {

release_request take_back(std::string key, std::string latch) {
  release_request r;
  r.key = std::move(key);
  r.take_back = true;
  r.latch = std::move(latch);
  return r;
}

}  // namespace

TEST(take_back_book, an_owner_on_a_key_sees_only_its_own_take_backs_until_they_are_answered) {
  take_back_book book;
  const take_back_book::id mine{"k", "client:1"};
  const take_back_book::id other_owner{"k", "client:2"};
  const take_back_book::id other_key{"j", "client:1"};
  EXPECT_TRUE(book.pending(mine).empty());
  book.add(mine, take_back("k", "latch-a"));
  book.add(mine, take_back("k", "latch-b"));
  book.add(other_owner, take_back("k", "latch-c"));
  EXPECT_EQ(book.size(), 3u);
  ASSERT_EQ(book.pending(mine).size(), 2u);
  EXPECT_EQ(book.pending(mine)[0].latch, "latch-a");
  EXPECT_TRUE(book.pending(other_key).empty());

  book.answered(mine, "latch-a");
  ASSERT_EQ(book.pending(mine).size(), 1u);
  EXPECT_EQ(book.pending(mine)[0].latch, "latch-b");
  // A second answer (another copy of the same take-back) changes nothing more.
  book.answered(mine, "latch-a");
  EXPECT_EQ(book.pending(mine).size(), 1u);
  book.answered(mine, "latch-b");
  EXPECT_TRUE(book.pending(mine).empty());
  EXPECT_EQ(book.pending(other_owner).size(), 1u);
  book.answered(other_owner, "latch-c");
  EXPECT_TRUE(book.empty());
}

TEST(take_back_book, an_answer_for_an_unknown_owner_or_latch_is_ignored) {
  take_back_book book;
  book.answered({"k", "o"}, "nothing");
  EXPECT_TRUE(book.empty());
  book.add({"k", "o"}, take_back("k", "l"));
  book.answered({"k", "o"}, "another");
  EXPECT_EQ(book.size(), 1u);
}

TEST(take_back_book, has_tells_an_owner_on_a_key_apart_without_copying) {
  take_back_book book;
  EXPECT_FALSE(book.has("k", "o"));
  book.add({"k", "o"}, take_back("k", "l"));
  EXPECT_TRUE(book.has("k", "o"));
  EXPECT_FALSE(book.has("k", "o2"));
  EXPECT_FALSE(book.has("k2", "o"));
  EXPECT_FALSE(book.has("", ""));
  book.answered({"k", "o"}, "l");
  EXPECT_FALSE(book.has("k", "o"));
}
