// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "layout/ids.hpp"

using namespace relock::layout;

namespace {

// std::regex would do, but GCC 12 warns inside <regex> under -O1 and the sanitizers.
bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return is_lower_hex(c); });
}

// 8-4-4-4-12 lowercase hex, version nibble 4, variant bits 10 (RFC 9562 §4, §5.4).
bool is_canonical_v4(std::string_view id) {
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !is_lower_hex(id[i])) return false;
  }
  return id[14] == '4' && std::string_view("89ab").find(id[19]) != std::string_view::npos;
}

}  // namespace

TEST(ids, uuid_is_canonical_version_4) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_uuid();
    EXPECT_TRUE(is_canonical_v4(id)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(ids, request_ids_are_32_hex_digits) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    auto id = random_request_id();
    EXPECT_TRUE(id.size() == 32 && is_lower_hex(id)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(ids, random_bytes_has_the_asked_length) {
  for (std::size_t n : {0, 1, 7, 8, 9, 16, 17, 100}) EXPECT_EQ(random_bytes(n).size(), n);
  EXPECT_NE(random_bytes(16), random_bytes(16));
}

// Every byte value turns up, so no byte of a generator word is dropped or stuck at zero.
TEST(ids, random_bytes_covers_every_byte_value) {
  std::set<unsigned char> values;
  for (unsigned char b : random_bytes(1 << 16)) values.insert(b);
  EXPECT_EQ(values.size(), 256u);
}

TEST(ids, thread_numbers_are_stable_and_distinct) {
  auto mine = current_thread_number();
  EXPECT_EQ(current_thread_number(), mine);
  std::uint64_t other = 0;
  std::thread([&] { other = current_thread_number(); }).join();
  EXPECT_NE(other, mine);
  auto owner = next_owner_number();
  EXPECT_NE(owner, mine);
  EXPECT_NE(owner, other);
  EXPECT_GE(mine, 1u);
}

// Threads running at the same time get distinct numbers, and a thread started after another
// ended never gets its number back (an owner field must not pass to a stranger).
TEST(ids, concurrent_and_later_threads_never_share_a_number) {
  constexpr int count = 16;
  std::vector<std::uint64_t> numbers(count);
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&numbers, i] { numbers[i] = current_thread_number(); });
  }
  for (auto& t : threads) t.join();
  std::uint64_t later = 0;
  std::thread([&] { later = current_thread_number(); }).join();
  numbers.push_back(later);
  numbers.push_back(current_thread_number());
  std::sort(numbers.begin(), numbers.end());
  EXPECT_EQ(std::adjacent_find(numbers.begin(), numbers.end()), numbers.end());
}

// Each thread has its own generator; two threads must not produce the same sequence.
TEST(ids, threads_make_distinct_ids) {
  std::mutex mutex;
  std::set<std::string> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 500; ++i) mine.push_back(random_uuid());
      std::lock_guard lock(mutex);
      seen.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 8u * 500u);
}

TEST(ids, a_forked_child_does_not_repeat_its_parents_uuids) {
  random_uuid();  // the parent's generator is seeded and in use
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto id = random_uuid();
    _exit(write(pipe_fds[1], id.data(), id.size()) == 36 ? 0 : 1);
  }
  char buffer[36];
  auto got = read(pipe_fds[0], buffer, sizeof buffer);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got, 36);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(std::string(buffer, 36), random_uuid());
}

TEST(ids, permit_ids_go_to_bytes_and_back) {
  const std::string bytes("\x00\xff\x10\xab", 4);
  EXPECT_EQ(relock::layout::to_hex(bytes), "00ff10ab");
  EXPECT_EQ(relock::layout::from_hex("00FF10ab"), bytes);
  EXPECT_EQ(relock::layout::from_hex("abc"), std::nullopt);
  EXPECT_EQ(relock::layout::from_hex("zz"), std::nullopt);
}
