// SPDX-License-Identifier: Apache-2.0
// The kinds that need nothing but their own commands, each taken and given back once under the
// names `name(kind)` makes: what every "works under these rules" test (one server, Cluster,
// Sentinel ACLs) walks through beside the waits it observes its own way.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include <relock/client.hpp>

namespace relock::test {

inline void take_and_give_back_each_kind(relock::client& client, relock::client& other,
                                         const std::function<std::string(const char*)>& name) {
  using namespace std::chrono_literals;
  auto fair = client.fair_lock(name("fair"));
  EXPECT_TRUE(fair.try_lock());
  EXPECT_FALSE(other.fair_lock(name("fair")).try_lock(50ms)) << "queued, then gave up";
  fair.unlock();

  auto rw = client.read_write_lock(name("rw"));
  rw.lock_shared();
  rw.unlock_shared();
  rw.lock();
  rw.unlock();

  auto fenced = client.fenced_lock(name("fenced"));
  EXPECT_GT(fenced.lock_and_get_token(), 0);
  fenced.unlock();

  auto spin = client.spin_lock(name("spin"));
  EXPECT_TRUE(spin.try_lock());
  spin.unlock();

  auto sem = client.semaphore(name("sem"));
  EXPECT_TRUE(sem.try_set_permits(2));
  EXPECT_TRUE(sem.try_acquire(2));
  sem.release(2);

  auto permits = client.permit_expirable_semaphore(name("permits"));
  EXPECT_TRUE(permits.try_set_permits(1));
  permits.acquire().release();
}

}  // namespace relock::test
