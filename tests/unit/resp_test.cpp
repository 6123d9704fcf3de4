// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "resp/bulk_strings.hpp"
#include "resp/reader.hpp"
#include "resp/request.hpp"
#include "resp/spare_payloads.hpp"

using relock::resp::reader;
using relock::resp::reply;

namespace {

std::vector<reply> read_all(std::string_view bytes, bool byte_at_a_time) {
  reader r;
  std::vector<reply> out;
  if (byte_at_a_time) {
    for (char c : bytes) {
      r.feed(&c, 1);
      while (auto next = r.next()) out.push_back(std::move(*next));
    }
  } else {
    r.feed(bytes.data(), bytes.size());
    while (auto next = r.next()) out.push_back(std::move(*next));
  }
  return out;
}

const std::string_view every_type =
    "+OK\r\n-ERR boom here\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n*-1\r\n*0\r\n"
    "*3\r\n:1\r\n*2\r\n$1\r\na\r\n$0\r\n\r\n+x\r\n";

std::vector<reply> expected_every_type() {
  return {reply::make_status("OK"),
          reply::make_error("ERR boom here"),
          reply::make_integer(-42),
          reply::make_string(std::string("he\r\no")),
          reply::make_nil(),
          reply::make_nil(),
          reply::make_array({}),
          reply::make_array({reply::make_integer(1),
                             reply::make_array({reply::make_string("a"), reply::make_string("")}),
                             reply::make_status("x")})};
}

}  // namespace

TEST(resp_reader, decodes_every_type_in_one_chunk) {
  EXPECT_EQ(read_all(every_type, false), expected_every_type());
}

TEST(resp_reader, decodes_every_type_one_byte_at_a_time) {
  EXPECT_EQ(read_all(every_type, true), expected_every_type());
}

TEST(resp_reader, waits_for_the_rest_of_a_reply) {
  reader r;
  r.feed("$10\r\n01234", 10);
  EXPECT_FALSE(r.next());
  r.feed("56789\r\n", 7);
  auto got = r.next();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->str, "0123456789");
}

TEST(resp_reader, rejects_malformed_input) {
  for (std::string_view bad : {"?what\r\n", ":12x\r\n", "$abc\r\n"}) {
    reader r;
    EXPECT_THROW(
        {
          r.feed(bad.data(), bad.size());
          r.next();
        },
        relock::resp::protocol_error)
        << bad;
  }
}

TEST(resp_reader, error_code_is_the_first_word) {
  EXPECT_EQ(reply::make_error("NOSCRIPT No matching script").error_code(), "NOSCRIPT");
  EXPECT_EQ(reply::make_error("WRONGTYPE").error_code(), "WRONGTYPE");
  EXPECT_EQ(reply::make_string("NOSCRIPT").error_code(), "");
}

TEST(resp_request, encodes_commands_back_to_back) {
  relock::resp::request r{"SET", "k", std::string_view("a\0b", 3)};
  r.push({"GET", "k"});
  EXPECT_EQ(r.commands(), 2u);
  using namespace std::string_literals;
  EXPECT_EQ(r.payload(),
            "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n"s + "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
}

TEST(resp_request, a_command_of_three_parts_counts_every_argument) {
  // EVALSHA's shape: a head, the keys, the arguments; 12 arguments, a two-digit count.
  const std::vector<std::string> keys{"a", "b", "c", "d", "e"};
  const std::vector<std::string> args{"1", "22", "", std::string(12, 'x')};
  std::vector<reply> expected;
  for (std::string_view a : {"EVALSHA", "sha", "5"})
    expected.push_back(reply::make_string(std::string(a)));
  for (const auto& k : keys) expected.push_back(reply::make_string(k));
  for (const auto& a : args) expected.push_back(reply::make_string(a));
  // The same bytes from strings and from strings already encoded (resp::bulk_strings).
  relock::resp::request from_strings, from_encoded;
  from_strings.push({"EVALSHA", "sha", "5"}, std::span<const std::string>(keys),
                    std::span<const std::string>(args));
  from_encoded.push({"EVALSHA", "sha", "5"}, relock::resp::bulk_strings(keys),
                    relock::resp::bulk_strings(args));
  EXPECT_EQ(from_encoded.payload(), from_strings.payload());
  auto got = read_all(from_strings.payload(), true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], reply::make_array(std::move(expected)));
  EXPECT_EQ(from_strings.payload().substr(0, 5), "*12\r\n");
  EXPECT_EQ(from_strings.commands(), 1u);
}

TEST(resp_bulk_strings, keeps_each_string_encoded_and_reads_it_back) {
  using relock::resp::bulk_strings;
  bulk_strings list{"key", std::string(20, 'o'), ""};
  list.push_back(std::string_view("a\0b", 3));
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list.front(), "key");
  EXPECT_EQ(list[1], std::string(20, 'o'));
  EXPECT_EQ(list[2], "");
  EXPECT_EQ(list.back(), std::string_view("a\0b", 3));
  EXPECT_EQ(list.decoded(),
            (std::vector<std::string>{"key", std::string(20, 'o'), "", std::string("a\0b", 3)}));
  EXPECT_EQ(list.encoded().substr(0, 16), "$3\r\nkey\r\n$20\r\noo");
  EXPECT_THROW(list[4], std::out_of_range);
  EXPECT_THROW(bulk_strings().front(), std::out_of_range);
  // Its size is its strings' encoded sizes: what a list built at once reserves.
  EXPECT_EQ(list.encoded().size(), bulk_strings::encoded_size("key") +
                                       bulk_strings::encoded_size(std::string(20, 'o')) +
                                       bulk_strings::encoded_size("") +
                                       bulk_strings::encoded_size(std::string_view("a\0b", 3)));
  EXPECT_EQ(bulk_strings::encoded_size(std::string(10, 'x')), 5u + 10u + 2u);  // $10\r\n x..x \r\n
}

TEST(resp_request, round_trips_through_the_reader_as_arrays) {
  relock::resp::request r{"EVALSHA", "", "0"};
  auto got = read_all(r.payload(), true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], reply::make_array({reply::make_string("EVALSHA"), reply::make_string(""),
                                       reply::make_string("0")}));
}

TEST(resp_spare_payloads, a_written_requests_buffer_is_reused_on_its_thread_only) {
  using relock::resp::spare_payloads;
  // A thread of its own: the spares are per thread.
  std::thread([] {
    EXPECT_EQ(spare_payloads::take().capacity(), std::string().capacity()) << "none kept yet";
    std::string written(200, 'x');
    const char* buffer = written.data();
    spare_payloads::give(std::move(written));
    auto reused = relock::resp::request::reusing_spare();
    reused.push({"GET", "k"});
    EXPECT_EQ(reused.payload().data(), buffer) << "encoded into the kept buffer";
    std::thread([] {
      EXPECT_EQ(spare_payloads::take().capacity(), std::string().capacity()) << "not shared";
    }).join();
    // Too large to keep, and no more than `kept`.
    spare_payloads::give(std::string(spare_payloads::largest + 1, 'x'));
    EXPECT_EQ(spare_payloads::take().capacity(), std::string().capacity());
    for (std::size_t i = 0; i < spare_payloads::kept + 4; ++i) {
      spare_payloads::give(std::string(100, 'x'));
    }
    std::size_t kept = 0;
    while (spare_payloads::take().capacity() > std::string().capacity()) ++kept;
    EXPECT_EQ(kept, spare_payloads::kept);
  }).join();
}
