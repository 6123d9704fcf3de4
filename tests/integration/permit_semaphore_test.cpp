// SPDX-License-Identifier: Apache-2.0
// permit_expirable_semaphore (Redisson's RPermitExpirableSemaphore) on a real server: permits are
// 16 raw bytes in {name}:timeout scored by their expiry (Unix ms), shown as 32 hex chars. A holder
// SIGKILLed gives its permit back when its lease ends, explicit or the watchdog's; the next script
// call reclaims expired permits; update_lease extends one; a permit without a lease lives as long
// as its client; unknown ids, bad input and other types are refused.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "support/child_process.hpp"
#include "support/lock_env.hpp"
#include "support/permit_ids.hpp"
#include "support/raw_subscriber.hpp"

namespace permit_semaphore_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

const std::string timeout_key = "{pes}:timeout";
const std::string channel = "redisson_sc:{pes}";

// The permit's expiry (Unix ms) in the timeout set, or nullopt when it is not there.
std::optional<std::int64_t> expiry_of(raw_client& raw, const std::string& id) {
  auto r = raw.command({"ZSCORE", timeout_key, raw_bytes(id)});
  if (r.is_nil()) return std::nullopt;
  return static_cast<std::int64_t>(std::stod(r.str));
}

// A child holding the permit of "pes" (1 permit) until SIGKILLed. It sends the permit id through
// a pipe; it exits by itself when the test closes its end of a second pipe (a failed test).
struct holder_child {
  pid_t pid = -1;
  int id_from_child = -1;
  int keep_alive = -1;

  holder_child(const redis_server& server, std::optional<std::chrono::milliseconds> lease,
               std::chrono::milliseconds watchdog_lease) {
    int ids[2], alive[2];
    if (pipe(ids) != 0 || pipe(alive) != 0) return;
    pid = fork_child([&] {
      close(ids[0]);
      close(alive[1]);
      auto settings = settings_for(server);
      settings.watchdog_lease = watchdog_lease;
      relock::client c(settings);
      // Detached: the permit stays taken until the test kills this process.
      const std::string id = c.permit_expirable_semaphore("pes").acquire(lease).detach();
      if (write(ids[1], id.data(), id.size()) != static_cast<ssize_t>(id.size())) return 2;
      char byte = 0;
      while (read(alive[0], &byte, 1) > 0) {
      }
      return 3;  // the test ended without killing it
    });
    close(ids[1]);
    close(alive[0]);
    id_from_child = ids[0];
    keep_alive = alive[1];
  }
  std::string read_id() const {
    std::string id(32, '\0');
    std::size_t got = 0;
    while (got < id.size()) {
      const ssize_t n = read(id_from_child, id.data() + got, id.size() - got);
      if (n <= 0) return {};
      got += static_cast<std::size_t>(n);
    }
    return id;
  }
  void kill_it() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~holder_child() {
    if (id_from_child >= 0) close(id_from_child);
    if (keep_alive >= 0) close(keep_alive);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
};

}  // namespace

TEST(permit_semaphore, acquire_returns_a_hex_id_held_as_sixteen_bytes_scored_by_its_expiry) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  EXPECT_EQ(sem.key(), "pes");
  EXPECT_TRUE(sem.try_set_permits(2));
  EXPECT_FALSE(sem.try_set_permits(5));
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "2");

  const auto before = unix_ms();
  const std::string id = sem.acquire(10s).detach();  // given back by id below
  const auto after = unix_ms();
  EXPECT_TRUE(is_permit_id(id)) << id;
  EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 1);
  const auto expiry = expiry_of(raw, id);
  ASSERT_TRUE(expiry) << "the permit is not in " << timeout_key << " as its 16 bytes";
  EXPECT_GE(*expiry, before + 10'000);
  EXPECT_LE(*expiry, after + 10'000);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1");
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(sem.acquired_permits(), 1);

  auto other = sem.try_acquire(0ms, 5s);
  ASSERT_TRUE(other);
  EXPECT_TRUE(is_permit_id(other->id()));
  EXPECT_NE(other->id(), id);
  EXPECT_FALSE(sem.try_acquire());
  EXPECT_EQ(sem.acquired_permits(), 2);

  raw_subscriber sub(server, channel);
  sem.release(id);
  EXPECT_FALSE(expiry_of(raw, id));
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1");
  const auto heard = sub.next(5s);
  ASSERT_TRUE(heard);
  EXPECT_EQ(*heard, "1") << "a release publishes the new count";
  other->release();
  EXPECT_FALSE(*other);
  EXPECT_EQ(sem.available_permits(), 2);
  EXPECT_EQ(sem.acquired_permits(), 0);
  EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 0);
}

// A holder SIGKILLed with a 1 s lease: its permit comes back when the lease ends, not before,
// and a waiter gets it then (it looks again when the earliest permit expires).
TEST(permit_semaphore, a_killed_holder_frees_its_permit_when_its_lease_ends) {
  redis_server server;
  raw_client::to(server).command({"SET", "pes", "1"});
  holder_child child(server, 1000ms, 30s);
  ASSERT_GT(child.pid, 0);
  const std::string dead = child.read_id();
  ASSERT_TRUE(is_permit_id(dead)) << dead;
  child.kill_it();

  relock::client client(settings_for(server));
  auto raw = raw_client::to(server);
  auto sem = client.permit_expirable_semaphore("pes");
  const auto expiry = expiry_of(raw, dead);
  ASSERT_TRUE(expiry);
  const auto taken = sem.try_acquire(10s, 5s);
  const auto got_at = unix_ms();
  ASSERT_TRUE(taken) << "the dead holder's permit never came back";
  EXPECT_GE(got_at, *expiry) << "freed before its lease ended";
  EXPECT_LE(got_at, *expiry + 500);
  std::cout << "the dead holder's permit was taken " << got_at - *expiry
            << " ms after its lease ended" << std::endl;
  EXPECT_FALSE(expiry_of(raw, dead));
  EXPECT_TRUE(expiry_of(raw, taken->id()));
}

// A holder without a lease, its watchdog renewing it (watchdog_lease 1.5 s, a renewal every
// 0.5 s), SIGKILLed: the permit comes back within a watchdog lease of the kill.
TEST(permit_semaphore, a_killed_holder_without_a_lease_frees_its_permit_within_the_watchdog_lease) {
  redis_server server;
  raw_client::to(server).command({"SET", "pes", "1"});
  constexpr auto watchdog_lease = 1500ms;
  holder_child child(server, std::nullopt, watchdog_lease);
  ASSERT_GT(child.pid, 0);
  const std::string dead = child.read_id();
  ASSERT_TRUE(is_permit_id(dead)) << dead;

  auto raw = raw_client::to(server);
  const auto first = expiry_of(raw, dead);
  ASSERT_TRUE(first);
  EXPECT_LE(*first, unix_ms() + watchdog_lease / 1ms) << "a permit without lease is the watchdog's";
  ASSERT_TRUE(wait_until([&] { return expiry_of(raw, dead).value_or(0) > *first; }, 3s))
      << "the child's watchdog never renewed its permit";
  child.kill_it();
  const auto killed_at = unix_ms();
  const auto last = expiry_of(raw, dead);  // no renewal after the kill
  ASSERT_TRUE(last);
  EXPECT_LE(*last - killed_at, watchdog_lease / 1ms);

  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  const auto taken = sem.try_acquire(10s, 5s);
  const auto got_at = unix_ms();
  ASSERT_TRUE(taken) << "the dead holder's permit never came back";
  EXPECT_GE(got_at, *last) << "freed before its watchdog lease ended";
  EXPECT_LE(got_at - killed_at, watchdog_lease / 1ms + 500);
  std::cout << "the dead holder's permit was taken " << got_at - killed_at << " ms after the kill, "
            << got_at - *last << " ms after its last renewal ran out" << std::endl;
}

// An expired permit stays in the data until a script of the semaphore runs: then it is reclaimed
// (the count goes up, the new count is published).
TEST(permit_semaphore, expired_permits_are_reclaimed_by_the_next_script_call) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  ASSERT_TRUE(sem.try_set_permits(1));
  const std::string id = sem.acquire(200ms).detach();  // left to expire
  const auto expiry = expiry_of(raw, id);
  ASSERT_TRUE(expiry);
  raw_subscriber sub(server, channel);
  ASSERT_TRUE(wait_until([&] { return unix_ms() > *expiry + 20; }, 2s));
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "0");
  EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 1);

  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1");
  EXPECT_EQ(raw.command({"EXISTS", timeout_key}).integer, 0);
  const auto heard = sub.next(5s);
  ASSERT_TRUE(heard);
  EXPECT_EQ(*heard, "1");
  EXPECT_EQ(sem.acquired_permits(), 0);
}

// update_lease moves the expiry: the permit outlives its first lease and is released normally.
TEST(permit_semaphore, update_lease_extends_a_permit_past_its_first_lease) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  ASSERT_TRUE(sem.try_set_permits(1));
  const std::string id = sem.acquire(300ms).detach();  // given back by id below
  const auto first = expiry_of(raw, id);
  ASSERT_TRUE(first);
  EXPECT_TRUE(sem.update_lease(id, 3s));
  const auto extended = expiry_of(raw, id);
  ASSERT_TRUE(extended);
  EXPECT_GE(*extended, *first + 2'000);

  ASSERT_TRUE(wait_until([&] { return unix_ms() > *first + 300; }, 3s));
  EXPECT_EQ(sem.available_permits(), 0) << "the permit expired at its first lease";
  EXPECT_EQ(sem.acquired_permits(), 1);
  EXPECT_TRUE(expiry_of(raw, id));
  EXPECT_FALSE(sem.try_acquire());
  sem.release(id);
  EXPECT_EQ(sem.available_permits(), 1);
  EXPECT_FALSE(sem.update_lease(id, 3s));
  EXPECT_FALSE(sem.update_lease(std::string(32, 'a'), 3s));
  EXPECT_EQ(raw.command({"EXISTS", timeout_key}).integer, 0);
}

// Releasing a permit nobody holds: not_owner (try_release: false), nothing changed. Releasing
// this client's permit after it expired: lock_lost.
TEST(permit_semaphore, release_of_an_unknown_permit_is_not_owner_and_of_an_expired_one_lock_lost) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  ASSERT_TRUE(sem.try_set_permits(1));
  const std::string unknown = "00112233445566778899aabbccddeeff";
  EXPECT_EQ(error_of([&] { sem.release(unknown); }), errc::not_owner);
  EXPECT_FALSE(sem.try_release(unknown));
  EXPECT_EQ(async_error_of<>([&](auto h) { sem.async_release(unknown, h); }), errc::not_owner);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1");
  EXPECT_EQ(raw.command({"EXISTS", timeout_key}).integer, 0);

  const std::string id = sem.acquire(10s).detach();  // given back by id below
  EXPECT_EQ(error_of([&] { sem.release(unknown); }), errc::not_owner);
  EXPECT_TRUE(expiry_of(raw, id));
  EXPECT_TRUE(sem.try_release(id));
  EXPECT_FALSE(sem.try_release(id));
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1");

  const std::string expiring = sem.acquire(100ms).detach();
  const auto expiry = expiry_of(raw, expiring);
  ASSERT_TRUE(expiry);
  ASSERT_TRUE(wait_until([&] { return unix_ms() > *expiry + 20; }, 2s));
  EXPECT_EQ(error_of([&] { sem.release(expiring); }), errc::lock_lost);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "1") << "reclaimed once, not also released";
}

// A permit without a lease is the watchdog's (watchdog_lease 900 ms): after three leases it is
// still held, its expiry always ahead, while its client lives.
TEST(permit_semaphore, a_permit_without_a_lease_is_held_for_three_watchdog_leases) {
  redis_server server;
  auto raw = raw_client::to(server);
  auto settings = settings_for(server);
  settings.watchdog_lease = 900ms;
  relock::client client(settings);
  auto sem = client.permit_expirable_semaphore("pes");
  ASSERT_TRUE(sem.try_set_permits(1));
  auto permit = sem.acquire();
  const std::string id = permit.id();
  const auto first = expiry_of(raw, id);
  ASSERT_TRUE(first);

  const auto until = steady::now() + 3 * 900ms + 300ms;
  std::int64_t latest = *first;
  while (steady::now() < until) {
    const auto expiry = expiry_of(raw, id);
    const auto now = unix_ms();
    ASSERT_TRUE(expiry) << "the permit left the set";
    ASSERT_GT(*expiry, now) << "the permit's expiry fell behind";
    latest = *expiry;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(latest, *first + 2'000) << "renewed all along";
  EXPECT_EQ(sem.available_permits(), 0);
  EXPECT_EQ(sem.acquired_permits(), 1);
  EXPECT_FALSE(sem.try_acquire());
  permit.release();
  EXPECT_EQ(sem.available_permits(), 1);
}

// set_permits makes available + acquired the given total; add_permits moves the available count
// (creating it); async acquire and release, with a future and with a callback; a stop request
// ends a waiting acquire with cancelled.
TEST(permit_semaphore, set_add_and_async_acquire_and_release) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server));
  auto sem = client.permit_expirable_semaphore("pes");
  sem.add_permits(3);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "3");
  auto held = sem.acquire(10s);
  sem.set_permits(5);
  EXPECT_EQ(sem.available_permits(), 4);
  EXPECT_EQ(sem.acquired_permits(), 1);
  sem.add_permits(-4);
  EXPECT_EQ(sem.available_permits(), 0);

  auto waiting = sem.async_acquire({.lease = 5s, .wait = 10s}, asio::use_future);
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  EXPECT_EQ(waiting.wait_for(0ms), std::future_status::timeout);
  held.async_release(asio::use_future).get();
  EXPECT_FALSE(held);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto id = waiting.get();
  ASSERT_TRUE(id);
  EXPECT_TRUE(is_permit_id(id->id()));
  EXPECT_FALSE(sem.async_acquire({.wait = 0ms}, asio::use_future).get());

  std::promise<std::error_code> released;
  sem.async_release(id->detach(), [&](std::error_code ec) { released.set_value(ec); });
  auto r = released.get_future();
  ASSERT_EQ(r.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(r.get());

  std::promise<std::pair<std::error_code, std::optional<relock::permit>>> called;
  sem.async_acquire({.lease = 5s}, [&](std::error_code ec, std::optional<relock::permit> got) {
    called.set_value({ec, std::move(got)});
  });
  auto c = called.get_future();
  ASSERT_EQ(c.wait_for(5s), std::future_status::ready);
  auto [ec, got] = c.get();
  EXPECT_FALSE(ec) << ec.message();
  ASSERT_TRUE(got);
  EXPECT_TRUE(expiry_of(raw, got->id()));

  std::stop_source stop;
  auto stopped = std::async(std::launch::async, [&] {
    return error_of([&] { (void)sem.acquire(5s, stop.get_token()); });
  });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  stop.request_stop();
  ASSERT_EQ(stopped.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(stopped.get(), errc::cancelled);
  EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 1);
  got->release();
  EXPECT_EQ(sem.available_permits(), 1);
}

// Absent: not_initialized unless the handle waits; malformed ids and negative leases or waits
// are refused before any I/O; a name holding a hash is wrong_type, and the hash stays.
TEST(permit_semaphore, absent_names_bad_ids_and_other_types_are_refused) {
  redis_server server;
  auto raw = raw_client::to(server);
  relock::client client(settings_for(server)), adder(settings_for(server));
  EXPECT_EQ(error_of([&] { client.permit_expirable_semaphore(""); }), errc::invalid_argument);

  auto sem = client.permit_expirable_semaphore("pes");
  EXPECT_EQ(error_of([&] { (void)sem.acquire(); }), errc::not_initialized);
  EXPECT_EQ(error_of([&] { (void)sem.try_acquire(1s); }), errc::not_initialized);
  EXPECT_EQ(raw.command({"EXISTS", "pes"}).integer, 0);
  EXPECT_EQ(raw.command({"EXISTS", timeout_key}).integer, 0);

  auto waiting = client.permit_expirable_semaphore("pes", {.wait_when_absent = true});
  auto got = std::async(std::launch::async, [&] { return waiting.try_acquire(10s, 5s); });
  ASSERT_TRUE(wait_until([&] { return subscribed(raw, channel); }, 5s));
  adder.permit_expirable_semaphore("pes").add_permits(1);
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  const auto id = got.get();
  ASSERT_TRUE(id);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "0");

  for (const std::string& bad : {std::string("xyz"), std::string(31, 'a'), std::string(33, 'a'),
                                 std::string(32, 'g'), std::string()}) {
    EXPECT_EQ(error_of([&] { sem.release(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { sem.try_release(bad); }), errc::invalid_argument) << bad;
    EXPECT_EQ(error_of([&] { sem.update_lease(bad, 1s); }), errc::invalid_argument) << bad;
  }
  EXPECT_EQ(error_of([&] { sem.update_lease(id->id(), -1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)sem.acquire(-1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)sem.try_acquire(-1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)sem.try_acquire(0ms, -1ms); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { sem.try_set_permits(-1); }), errc::invalid_argument);
  EXPECT_EQ(raw.command({"GET", "pes"}).str, "0");
  EXPECT_EQ(raw.command({"ZCARD", timeout_key}).integer, 1);

  raw.command({"HSET", "hashed", "field", "value"});
  auto typed = client.permit_expirable_semaphore("hashed");
  EXPECT_EQ(error_of([&] { (void)typed.acquire(1s); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { (void)typed.try_acquire(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { (void)typed.try_acquire(1s); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.available_permits(); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.try_set_permits(2); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.add_permits(2); }), errc::wrong_type);
  EXPECT_EQ(error_of([&] { typed.set_permits(2); }), errc::wrong_type);
  EXPECT_EQ(raw.command({"TYPE", "hashed"}).str, "hash");
  const auto fields = raw.command({"HGETALL", "hashed"});
  ASSERT_EQ(fields.elements.size(), 2u);
  EXPECT_EQ(fields.elements[0].str, "field");
  EXPECT_EQ(fields.elements[1].str, "value");
}

}  // namespace permit_semaphore_test
