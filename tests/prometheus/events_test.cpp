// SPDX-License-Identifier: Apache-2.0
// The observer fed events by hand, then scraped: the events a single test server does not give
// (a Cluster's MOVED, a failover, replicas' WAIT, an ACL-refused subscription, queue operations),
// and the holds gauge through a re-entry, a loss and the late release after it.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include <prometheus/registry.h>
#include <relock/errors.hpp>
#include <relock/observer.hpp>
#include <relock/prometheus.hpp>

#include "metrics_env.hpp"
#include "support/error_of.hpp"

using namespace std::chrono_literals;
using relock::errc;
using relock::test::count_of;
using relock::test::sample;
using relock::test::sum_of;

namespace {

class prometheus_events : public relock::test::metrics_env {
 protected:
  std::shared_ptr<relock::observer> observer_ = relock::make_prometheus_observer(*registry_);
};

}  // namespace

TEST_F(prometheus_events, layout_replica_subscription_and_queue_events_are_counted) {
  auto& o = *observer_;
  o.on_topology({.change = relock::topology_change::slot_moved, .to = "10.0.0.2:7000", .slot = 9});
  o.on_topology({.change = relock::topology_change::slot_moved, .to = "10.0.0.3:7000", .slot = 1});
  o.on_topology({.change = relock::topology_change::new_master, .to = "10.0.0.4:6379"});
  o.on_replica_sync({.key = "k", .wanted = 1, .acknowledged = 1, .waited = 2ms});
  o.on_replica_sync({.key = "k",
                     .wanted = 2,
                     .acknowledged = 1,
                     .waited = 50ms,
                     .error = make_error_code(errc::no_synced_replicas)});
  o.on_subscription_refused({.channel = "redisson_lock__channel:{x}", .detail = "NOPERM"});
  o.on_queue({.operation = relock::queue_operation::take,
              .key = "jobs",
              .outcome = relock::queue_outcome::empty,
              .waited = 100ms});
  o.on_queue({.operation = relock::queue_operation::offer, .key = "jobs", .waited = 1ms});
  o.on_connection({.address = "127.0.0.1:6379", .change = relock::connection_change::lost});
  o.on_connection(
      {.address = "127.0.0.1:6379", .change = relock::connection_change::restored, .down_for = 3s});

  const auto m = scraped();
  EXPECT_EQ(sum_of(m, "relock_topology_changes_total", {{"change", "slot_moved"}}), 2);
  EXPECT_EQ(sum_of(m, "relock_topology_changes_total", {{"change", "new_master"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_replica_sync_seconds_count"), 2);
  EXPECT_NEAR(sum_of(m, "relock_replica_sync_seconds_sum"), 0.052, 1e-9);
  EXPECT_EQ(sum_of(m, "relock_replica_sync_shortfalls_total"), 1);
  EXPECT_EQ(sum_of(m, "relock_subscription_refusals_total"), 1);
  EXPECT_EQ(
      sum_of(m, "relock_queue_operations_total", {{"operation", "take"}, {"outcome", "empty"}}), 1);
  EXPECT_EQ(
      sum_of(m, "relock_queue_operations_total", {{"operation", "offer"}, {"outcome", "done"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_queue_operations_total", {{"operation", "transfer"}}), 0);
  EXPECT_NEAR(sum_of(m, "relock_queue_wait_seconds_sum", {{"operation", "take"}}), 0.1, 1e-9);
  EXPECT_EQ(sum_of(m, "relock_connection_losses_total"), 1);
  EXPECT_EQ(sum_of(m, "relock_reconnects_total"), 1);
}

TEST_F(prometheus_events, the_holds_gauge_follows_reentries_losses_and_late_releases) {
  auto& o = *observer_;
  auto acquired = [&](const char* kind, const char* key) {
    o.on_acquire_start({.kind = kind, .key = key});
    o.on_acquire({.kind = kind, .key = key, .outcome = relock::acquire_outcome::acquired});
  };
  acquired("lock", "a");
  acquired("lock", "a");  // a re-entry
  acquired("read lock", "b");
  acquired("latch", "gate");  // an open latch: waited for, never held
  auto holds = [&](const char* kind) {
    return sum_of(scraped(), "relock_holds", {{"kind", kind}});
  };
  EXPECT_EQ(holds("lock"), 2);
  EXPECT_EQ(holds("read lock"), 1);
  EXPECT_EQ(count_of(scraped(), "relock_holds", {{"kind", "latch"}}), 0u);

  o.on_release({.kind = "lock", .key = "a", .held = 5ms});  // the re-entry's
  EXPECT_EQ(holds("lock"), 1);
  o.on_loss({.key = "a", .owner = "id:1", .reason = make_error_code(errc::lock_lost)});
  EXPECT_EQ(holds("lock"), 0);
  // The late unlock of the lost hold, then one of a hold never taken: neither counts down again.
  o.on_release({.kind = "lock", .key = "a", .error = make_error_code(errc::lock_lost)});
  o.on_release({.kind = "lock", .key = "other", .error = make_error_code(errc::not_owner)});
  EXPECT_EQ(holds("lock"), 0);
  // A release of another kind on a key ends nothing of this one's.
  o.on_release({.kind = "write lock", .key = "b", .error = make_error_code(errc::not_owner)});
  EXPECT_EQ(holds("read lock"), 1);
  o.on_loss({.key = "b", .owner = "id:1:read", .reason = make_error_code(errc::renewal_failed)});

  const auto m = scraped();
  EXPECT_EQ(sum_of(m, "relock_holds"), 0);
  EXPECT_EQ(sum_of(m, "relock_waiters"), 0);
  EXPECT_EQ(sum_of(m, "relock_losses_total", {{"reason", "lock_lost"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_losses_total", {{"reason", "renewal_failed"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_releases_total", {{"kind", "lock"}, {"outcome", "error"}}), 2);
  EXPECT_EQ(sum_of(m, "relock_hold_seconds_count"), 1);
}

TEST(prometheus_options, bad_options_are_refused_before_anything_is_registered) {
  ::prometheus::Registry registry;
  auto refused = [&](relock::prometheus_options o) {
    return relock::test::error_of(
        [&] { relock::make_prometheus_observer(registry, std::move(o)); });
  };
  EXPECT_EQ(refused({.prefix = "9lives_"}), errc::invalid_argument);
  EXPECT_EQ(refused({.prefix = "my-app_"}), errc::invalid_argument);
  EXPECT_EQ(refused({.constant_labels = {{"kind", "x"}}}), errc::invalid_argument);
  EXPECT_EQ(refused({.constant_labels = {{"__name__", "x"}}}), errc::invalid_argument);
  EXPECT_EQ(refused({.constant_labels = {{"a:b", "x"}}}), errc::invalid_argument);
  EXPECT_EQ(refused({.wait_buckets = {}}), errc::invalid_argument);
  EXPECT_EQ(refused({.hold_buckets = {1, 1}}), errc::invalid_argument);
  EXPECT_EQ(refused({.latency_buckets = {0.5, 0.1}}), errc::invalid_argument);
  EXPECT_TRUE(registry.Collect().empty());

  EXPECT_FALSE(refused({.prefix = "", .constant_labels = {{"service", "billing"}}}));
  EXPECT_FALSE(registry.Collect().empty());
}
