// SPDX-License-Identifier: Apache-2.0
// Every kind's reading of its acquire script's replies, from RESP bytes, as a table: what the
// scripts return (nil, a holder's TTL, a fenced lock's array, the kinds' own error replies) and
// what no script returns (a status, a bulk string, a malformed array), which must fail rather
// than count as a grant. No server: the reader is what the waiting loop calls with each reply.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <relock/errors.hpp>

#include "locks/lock_kinds.hpp"
#include "resp/reader.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "waiting/lock_kind.hpp"

namespace kind_replies_test {  // keeps this file's names apart in a unity build

using relock::errc;
using relock::detail::waiting::acquire_reply;
using relock::detail::waiting::grant_kind;
using outcome = acquire_reply::outcome;
namespace detail = relock::detail;
namespace resp = relock::resp;

namespace {

// One reply, as the wire carries it.
resp::reply from_bytes(std::string_view bytes) {
  resp::reader r;
  r.feed(bytes.data(), bytes.size());
  auto got = r.next();
  if (!got) throw std::runtime_error("not one whole reply: " + std::string(bytes));
  return std::move(*got);
}

acquire_reply acquired(std::string token = {}, std::int64_t holds = 0) {
  return {.result = outcome::acquired, .token = std::move(token), .holds = holds};
}
acquire_reply refused(std::int64_t holder_ttl_ms) {
  return {.result = outcome::refused, .holder_ttl = std::chrono::milliseconds(holder_ttl_ms)};
}
// An empty `ec` keeps the server's own error (its text reaches the caller).
acquire_reply failed(std::error_code ec = {}) { return {.result = outcome::failed, .ec = ec}; }

std::string describe(const acquire_reply& r) {
  const char* names[] = {"acquired", "refused", "failed"};
  return std::string(names[static_cast<int>(r.result)]) +
         " ttl=" + std::to_string(r.holder_ttl.count()) + " token='" + r.token +
         "' holds=" + std::to_string(r.holds) + " ec=" + r.ec.message();
}

struct reply_case {
  std::string_view bytes;
  acquire_reply want;
};

struct kind_case {
  const char* name;
  const grant_kind& kind;
  std::vector<reply_case> replies;
};

std::vector<reply_case> operator+(std::vector<reply_case> a, const std::vector<reply_case>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The lock family's reading (read_lock_reply), which the latch's await and the semaphores share.
// nil: taken or re-entered. An integer: the holder's PTTL (-1: a holder with no TTL; 0: its last
// millisecond, or a try whose take-back ran first).
const std::vector<reply_case> lock_answers = {
    {"$-1\r\n", acquired()},
    {":-1\r\n", refused(-1)},
    {":0\r\n", refused(0)},
};
const std::vector<reply_case> holder_ttl = {
    {":29750\r\n", refused(29'750)},
};
// A kind's own error replies refuse for good with its error; any other error reply keeps the
// server's; what no script returns is an error too.
const std::vector<reply_case> lock_errors = {
    {"-NON_REENTRANT_REACQUIRE the owner already holds this lock\r\n", failed(errc::non_reentrant)},
    {"-RWLOCK_UPGRADE the owner holds a read lock\r\n", failed(errc::would_deadlock)},
    {"-WRONGTYPE the key holds a hash that is not a read-write lock\r\n", failed()},
    {"-ERR Error running script\r\n", failed()},
    {"+OK\r\n", failed(errc::server_error)},
    {"$2\r\n10\r\n", failed(errc::server_error)},
    {"*0\r\n", failed(errc::server_error)},
    {"*2\r\n:-1\r\n:7\r\n", failed(errc::server_error)},
};
const std::vector<reply_case> lock_replies = lock_answers + holder_ttl + lock_errors;

// The fenced acquire: {-1, token, holds} acquired (Redisson's script returns the first two);
// {PTTL, -1} refused, the token telling a holder without TTL (-1) from a grant. Anything else
// is an error, even what would be a grant for a plain lock (nil).
const std::vector<reply_case> fenced_replies = {
    {"*3\r\n:-1\r\n:42\r\n:1\r\n", acquired("42", 1)},
    {"*3\r\n:-1\r\n:43\r\n:2\r\n", acquired("43", 2)},
    {"*2\r\n:-1\r\n:7\r\n", acquired("7", 0)},
    {"*3\r\n:-1\r\n:7\r\n$1\r\n2\r\n", acquired("7", 0)},
    {"*2\r\n:29750\r\n:-1\r\n", refused(29'750)},
    {"*2\r\n:-1\r\n:-1\r\n", refused(-1)},
    {"*2\r\n:0\r\n:-1\r\n", refused(0)},
    {"*2\r\n:-1\r\n:0\r\n", refused(-1)},
    {"-WRONGTYPE {f}:token holds a string that is not a token\r\n", failed()},
    {"-NON_REENTRANT_REACQUIRE the owner already holds this lock\r\n", failed(errc::non_reentrant)},
    {"$-1\r\n", failed(errc::server_error)},
    {":29750\r\n", failed(errc::server_error)},
    {"+OK\r\n", failed(errc::server_error)},
    {"*0\r\n", failed(errc::server_error)},
    {"*1\r\n:-1\r\n", failed(errc::server_error)},
    {"*2\r\n:-1\r\n$2\r\n42\r\n", failed(errc::server_error)},
    {"*2\r\n$2\r\n-1\r\n:42\r\n", failed(errc::server_error)},
};

// A semaphore that was never given permits refuses with NOT_INITIALIZED, unless its try waits
// for one (then it answers -1 as for a count of 0).
const std::vector<reply_case> not_initialized = {
    {"-NOT_INITIALIZED semaphore s holds nothing: no permits were ever set\r\n",
     failed(errc::not_initialized)},
};

// A permit's refusal is the time until the earliest permit expires (-1: none does); a lost
// message costs at most the recheck, so a long one is cut to a second.
const std::vector<reply_case> permit_waits = {
    {":300\r\n", refused(300)},
    {":1000\r\n", refused(1'000)},
    {":5000\r\n", refused(1'000)},
    {":29750\r\n", refused(1'000)},
};

std::vector<kind_case> every_kind() {
  return {
      {"lock", detail::waiting::reentrant_lock_kind, lock_replies},
      {"non-reentrant lock", detail::waiting::non_reentrant_lock_kind, lock_replies},
      {"read lock", detail::locks::rwlock_read_kind, lock_replies},
      {"write lock", detail::locks::rwlock_write_kind, lock_replies},
      {"fair lock", detail::locks::fair_lock_kind, lock_replies},
      {"non-reentrant fair lock", detail::locks::non_reentrant_fair_lock_kind, lock_replies},
      {"fenced lock", detail::locks::fenced_lock_kind, fenced_replies},
      {"spin lock", detail::locks::spin_lock_kind, lock_replies},
      {"semaphore", detail::synchronizers::semaphore_grant(false), lock_replies + not_initialized},
      {"semaphore waiting when absent", detail::synchronizers::semaphore_grant(true),
       lock_replies + not_initialized},
      {"permit", detail::synchronizers::permit_grant(false),
       lock_answers + permit_waits + lock_errors + not_initialized},
      {"permit waiting when absent", detail::synchronizers::permit_grant(true),
       lock_answers + permit_waits + lock_errors + not_initialized},
      {"latch", detail::synchronizers::latch_grant, lock_replies},
  };
}

}  // namespace

TEST(kind_replies, every_kind_reads_each_reply_its_acquire_can_get) {
  for (const auto& k : every_kind()) {
    for (const auto& c : k.replies) {
      SCOPED_TRACE(std::string(k.name) + " reading " + resp::to_string(from_bytes(c.bytes)));
      const acquire_reply got = k.kind.read_acquire(from_bytes(c.bytes));
      EXPECT_EQ(describe(got), describe(c.want));
    }
  }
}

TEST(kind_replies, only_a_grant_reads_as_acquired) {
  // Whatever reads as acquired is a hold the caller will be told it has: no reply that is not a
  // kind's grant may read so.
  const std::vector<std::string_view> never_a_grant = {
      "+OK\r\n", "$0\r\n\r\n",    "$3\r\nnil\r\n", ":1\r\n",
      "*0\r\n",  "*1\r\n$-1\r\n", "-ERR x\r\n",    "*3\r\n:0\r\n:42\r\n:1\r\n"};
  for (const auto& k : every_kind()) {
    for (std::string_view bytes : never_a_grant) {
      SCOPED_TRACE(std::string(k.name) + " reading " + std::string(bytes));
      EXPECT_NE(k.kind.read_acquire(from_bytes(bytes)).result, outcome::acquired);
    }
  }
}

}  // namespace kind_replies_test
