// SPDX-License-Identifier: Apache-2.0
// The same-owner race (docs/faults.md): a copy of a release that Redis runs late, after the
// owner that sent it has been granted the lock again, must change nothing. One connection's
// bytes are held by the fault proxy while the client goes on over new connections, as a
// partition holds bytes that a client gave up on and delivers them when it heals.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <system_error>

#include <relock/client.hpp>
#include <relock/lock.hpp>
#include <relock/owner.hpp>

#include "support/fault_proxy.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

relock::config through(const fault_proxy& proxy) {
  relock::config c;
  c.url = "redis://" + proxy.host() + ":" + std::to_string(proxy.port());
  c.command_timeout = 1s;
  return c;
}

// The async forms with plain callbacks, waited for with a deadline.
std::future<std::pair<std::error_code, bool>> try_lock(relock::mutex& lock, relock::owner who) {
  auto done = std::make_shared<std::promise<std::pair<std::error_code, bool>>>();
  auto result = done->get_future();
  lock.async_try_lock(who, {}, [done](std::error_code ec, bool acquired) {
    done->set_value({ec, acquired});
  });
  return result;
}

std::future<std::error_code> unlock(relock::mutex& lock, relock::owner who) {
  auto done = std::make_shared<std::promise<std::error_code>>();
  auto result = done->get_future();
  lock.async_unlock(who, [done](std::error_code ec) { done->set_value(ec); });
  return result;
}

template <class T>
T within(std::future<T>& f, std::chrono::milliseconds limit) {
  if (f.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within " << limit.count() << " ms";
    return T{};
  }
  return f.get();
}

// The lock hash's fields and counts, as "field=count;...".
std::string holds_of(raw_client& direct, const std::string& key) {
  auto r = direct.command({"HGETALL", key});
  std::string out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out += r.elements[i].str + "=" + r.elements[i + 1].str + ";";
  }
  return out;
}

// Lets the held bytes go and waits until the server has answered them (to a client that is
// gone): by then the late copy has run.
void land_held_copies(fault_proxy& proxy) {
  const auto answered_before = proxy.orphan_reply_bytes();
  proxy.release_held();
  EXPECT_TRUE(wait_until(
      [&] {
        return proxy.held_request_bytes() == 0 && proxy.orphan_reply_bytes() > answered_before;
      },
      5s))
      << "the held copy never reached the server";
}

// The owner locks again at once, as an application would: a try that fails because its
// connection was just lost is tried again, within a deadline.
bool lock_again(relock::mutex& lock, relock::owner who) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    auto again = try_lock(lock, who);
    auto [ec, acquired] = within(again, 10s);
    if (!ec && acquired) return true;
    if (!ec) {
      ADD_FAILURE() << "the lock is held by someone else";
      return false;
    }
  }
  ADD_FAILURE() << "could not lock again within 10 s";
  return false;
}

// A lock and unlock on another name: the client has finished starting (its first look at the
// server's replicas answered), so nothing of its start is among what the proxy holds.
void warm_up(relock::client& client) {
  auto other = client.lock("warm-up");
  auto taken = try_lock(other, relock::owner::unique());
  ASSERT_TRUE(within(taken, 5s).second);
}

// A server, the fault proxy in front of it, a client through the proxy that has finished
// starting (warm_up), and a connection straight to the server to look at its data.
struct proxied {
  redis_server server;
  fault_proxy proxy{server.host(), server.port()};
  raw_client direct = raw_client::to(server);
  relock::client client{through(proxy)};
  proxied() { warm_up(client); }
};

// A try is granted but its reply is lost; its take-back is held on that connection, which the
// client then gives up on. The same owner (the calling thread, as std::unique_lock would use)
// locks again over a new connection: at once (`when` = at_once: before the take-back's resend
// has run) or once the resent take-back has released the lost grant (`when` = after_resend).
// Then the held take-back reaches Redis. It must not touch the new hold.
enum class lock_again_when { at_once, after_resend };

void late_take_back(lock_again_when when) {
  proxied p;
  auto lock = p.client.lock("same-owner-take-back");
  const auto me = relock::owner::current_thread();

  // The try runs and grants, but the client never hears.
  p.proxy.hold_replies();
  auto first = try_lock(lock, me);
  ASSERT_TRUE(wait_until(
      [&] {
        return holds_of(p.direct, "same-owner-take-back") != "" && p.proxy.held_reply_bytes() > 0;
      },
      5s))
      << "the try never ran, or its reply was not held";
  // Its take-back is held as well: a partition of that one connection.
  p.proxy.hold_requests();
  auto [first_error, first_acquired] = within(first, 5s);
  EXPECT_TRUE(first_error) << "the first try should have ended without an answer";
  EXPECT_FALSE(first_acquired);
  ASSERT_TRUE(wait_until([&] { return p.proxy.held_request_bytes() > 0; }, 5s))
      << "the take-back never went out";

  // The client gives the connection up: the take-back goes again over a new one.
  p.proxy.cut_held();
  if (when == lock_again_when::after_resend) {
    ASSERT_TRUE(wait_until([&] { return holds_of(p.direct, "same-owner-take-back") == ""; }, 5s))
        << "the resent take-back never released the lost grant";
  }
  ASSERT_TRUE(lock_again(lock, me));
  const std::string held = holds_of(p.direct, "same-owner-take-back");
  EXPECT_NE(held, "");

  // The partition heals: the held take-back runs now, and changes nothing.
  land_held_copies(p.proxy);
  EXPECT_EQ(holds_of(p.direct, "same-owner-take-back"), held);
  auto released = unlock(lock, me);
  EXPECT_FALSE(within(released, 5s));
  EXPECT_EQ(holds_of(p.direct, "same-owner-take-back"), "");
}

}  // namespace

TEST(same_owner_race, a_late_take_back_leaves_a_hold_taken_at_once_alone) {
  late_take_back(lock_again_when::at_once);
}

TEST(same_owner_race, a_late_take_back_leaves_a_hold_taken_after_its_resend_alone) {
  late_take_back(lock_again_when::after_resend);
}

// An unlock's first copy is held, the client gives its connection up, and the unlock completes
// through a copy sent again on a new connection. The owner locks again; then the first copy
// reaches Redis. It must not release the new hold.
TEST(same_owner_race, a_late_copy_of_an_unlock_leaves_the_owners_next_hold_alone) {
  proxied p;
  auto lock = p.client.lock("same-owner-unlock");
  const auto me = relock::owner::current_thread();
  auto taken = try_lock(lock, me);
  ASSERT_TRUE(within(taken, 5s).second);
  p.proxy.hold_requests();
  auto released = unlock(lock, me);
  ASSERT_TRUE(wait_until([&] { return p.proxy.held_request_bytes() > 0; }, 5s));
  p.proxy.cut_held();
  EXPECT_FALSE(within(released, 10s)) << "the unlock should complete through its second copy";
  EXPECT_EQ(holds_of(p.direct, "same-owner-unlock"), "");

  ASSERT_TRUE(lock_again(lock, me));
  const std::string held = holds_of(p.direct, "same-owner-unlock");
  EXPECT_NE(held, "");

  land_held_copies(p.proxy);
  EXPECT_EQ(holds_of(p.direct, "same-owner-unlock"), held);
  auto last = unlock(lock, me);
  EXPECT_FALSE(within(last, 5s));
}

// A try is held before it reaches Redis, the client gives its connection up, and the try's
// take-back runs first over a new one, finding nothing. When the held try lands, it must grant
// nothing: nobody would know of that hold, and it would keep the lock from everyone for its
// whole lease.
TEST(same_owner_race, a_try_landing_after_its_take_back_grants_nothing) {
  proxied p;
  auto lock = p.client.lock("late-try");
  const auto me = relock::owner::current_thread();

  p.proxy.hold_requests();
  auto first = try_lock(lock, me);
  EXPECT_TRUE(within(first, 5s).first) << "the try should have ended without an answer";
  ASSERT_TRUE(wait_until([&] { return p.proxy.held_request_bytes() > 0; }, 5s));
  p.proxy.cut_held();
  // The resent take-back has run once the try's latch exists.
  ASSERT_TRUE(wait_until(
      [&] {
        return p.direct.command({"KEYS", "redisson_unlock_latch:{late-try}:*"}).elements.size() ==
               1;
      },
      5s))
      << "the take-back never ran";

  land_held_copies(p.proxy);
  EXPECT_EQ(holds_of(p.direct, "late-try"), "");
  // And the owner can lock and unlock it as if nothing had happened.
  ASSERT_TRUE(lock_again(lock, me));
  EXPECT_EQ(holds_of(p.direct, "late-try").substr(holds_of(p.direct, "late-try").size() - 3),
            "=1;");
  auto released = unlock(lock, me);
  EXPECT_FALSE(within(released, 5s));
  EXPECT_EQ(holds_of(p.direct, "late-try"), "");
}
