// SPDX-License-Identifier: Apache-2.0
// pubsub=both on the shared test cluster: a fleet mid-upgrade, with Redisson 3.18.1 (classic
// pub/sub) and 4.x (sharded, its default in a cluster) on the same names. relock in mode both
// wakes a waiter of either version with its release, and is woken by the release of either.
// No Java client can do this: 3.18.1 and 4.x never hear each other in a cluster.
#include <gtest/gtest.h>

#include <cstdio>
#include <future>

#include <relock/client.hpp>

#include "redisson_driver.hpp"
#include "support/redis_cluster.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using relock::test::redisson_driver;
using relock::test::shared_cluster;
using relock::test::wait_until;
using steady = std::chrono::steady_clock;

namespace {

// Redisson in cluster mode from `jar` with its sharded subscription `mode` ("off" or "on").
redisson_driver java(const std::string& jar, const std::string& mode) {
  const auto& nodes = shared_cluster().nodes();
  redisson_driver::options o;
  for (std::size_t i = 1; i < nodes.size(); ++i) o.cluster_nodes.push_back(nodes[i].address());
  o.sharded_subscription = mode;
  return redisson_driver(jar, "redis://" + nodes.front().address(), std::move(o));
}

std::string jar_of(const std::string& version_prefix) {
  for (const auto& jar : redisson_driver::jar_params()) {
    if (jar.find("driver-" + version_prefix) != std::string::npos) return jar;
  }
  return "missing: no driver jar for Redisson " + version_prefix;
}

long long us(steady::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace

TEST(redisson_cluster_both, relock_in_mode_both_wakes_and_is_woken_by_redisson_3_and_4) {
  const std::string old_jar = jar_of("3."), new_jar = jar_of("4.");
  redisson_driver::check_jar(old_jar);
  redisson_driver::check_jar(new_jar);
  shared_cluster().restore();
  auto classic = java(old_jar, "off");
  auto sharded = java(new_jar, "on");
  relock::config c;
  c.url = shared_cluster().seed_url() + "?pubsub=both";
  relock::client client(c);

  struct peer {
    const char* what;
    redisson_driver& j;
  };
  for (peer p : {peer{"3.18.1 (classic)", classic}, peer{"4.x (sharded)", sharded}}) {
    SCOPED_TRACE(p.what);
    const std::string name = std::string("both:") + (p.what[0] == '3' ? "old" : "new");
    auto lk = client.lock(name);

    // relock holds, Redisson waits and wakes on relock's release.
    lk.lock(30s);
    auto id = p.j.send("a", "trylock " + name + " 20000");
    EXPECT_THROW(p.j.wait_reply(id, 300ms), std::runtime_error);  // still waiting
    auto released = steady::now();
    lk.unlock();
    auto r = p.j.wait_reply(id, 5s);
    EXPECT_EQ(r["result"], true) << r.dump();
    const auto java_woke = r["end_ns"].get<std::int64_t>() - released.time_since_epoch().count();
    EXPECT_LT(java_woke, 1'000'000'000);

    // Redisson holds (it just took the lock), relock waits and wakes on Redisson's release.
    auto waiting = std::async(std::launch::async, [&] {
      bool got = lk.try_lock(20s);
      auto at = steady::now();
      if (got) lk.unlock();
      return std::make_pair(got, at);
    });
    EXPECT_NE(waiting.wait_for(300ms), std::future_status::ready);
    auto java_released = steady::now();
    ASSERT_EQ(p.j.call_ok("a", "unlock " + name), true);
    ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
    auto [got, at] = waiting.get();
    EXPECT_TRUE(got);
    EXPECT_LT(at - java_released, 1s) << "woke on the message, not on the 30 s lease";
    std::printf("%s: Redisson woke %lld us after relock's release, relock %lld us after its\n",
                p.what, static_cast<long long>(java_woke / 1000), us(at - java_released));
  }
}
