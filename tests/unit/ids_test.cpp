#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "objects/ids.hpp"

using namespace relock::objects;

TEST(ids, uuid_is_canonical_version_4) {
  const std::regex form("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_uuid();
    EXPECT_TRUE(std::regex_match(id, form)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(ids, request_ids_are_32_hex_digits) {
  const std::regex form("[0-9a-f]{32}");
  EXPECT_TRUE(std::regex_match(random_request_id(), form));
  EXPECT_NE(random_request_id(), random_request_id());
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
  ASSERT_EQ(read(pipe_fds[0], buffer, sizeof buffer), 36);
  waitpid(child, nullptr, 0);
  EXPECT_NE(std::string(buffer, 36), random_uuid());
}
