// SPDX-License-Identifier: Apache-2.0
#include "prometheus/metrics_observer.hpp"

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "prometheus/words.hpp"

namespace relock::prometheus_detail {

namespace {

double seconds(std::chrono::microseconds d) { return std::chrono::duration<double>(d).count(); }

// A latch's await opens nothing that is released later: it is waited for, never held.
bool holds_something(std::string_view kind) { return kind != "latch"; }

}  // namespace

metrics_observer::metrics_observer(::prometheus::Registry& registry, prometheus_options options)
    : options_(std::move(options)),
      metrics_(registry, options_, static_cast<bool>(options_.label)) {}

std::string metrics_observer::group_of(std::string_view kind, std::string_view key) const {
  if (!options_.label) return {};
  // Thrown on relock's I/O thread it would end the client's work, not just a metric's.
  try {
    return options_.label(kind, key);
  } catch (...) {
    return "unlabelled";
  }
}

void metrics_observer::on_acquire_start(const acquire_start_event& e) {
  const std::string group = group_of(e.kind, e.key);
  std::lock_guard guard(mutex_);
  metrics_.waiters.at(std::array<std::string_view, 2>{e.kind, group}).Increment();
}

void metrics_observer::on_acquire(const acquire_event& e) {
  const std::string group = group_of(e.kind, e.key);
  const std::array<std::string_view, 3> labels{e.kind, group, word(e.outcome)};
  std::lock_guard guard(mutex_);
  metrics_.waiters.at(std::array<std::string_view, 2>{e.kind, group}).Decrement();
  metrics_.acquisitions.at(labels).Increment();
  metrics_.acquire_wait.at(labels).Observe(seconds(e.waited));
  if (e.outcome == acquire_outcome::acquired && holds_something(e.kind)) {
    book_.acquired(e.key, e.kind, group);
    metrics_.holds.at(std::array<std::string_view, 2>{e.kind, group}).Increment();
  }
}

void metrics_observer::on_release(const release_event& e) {
  const std::string group = group_of(e.kind, e.key);
  std::lock_guard guard(mutex_);
  metrics_.releases.at(std::array<std::string_view, 2>{e.kind, e.error ? "error" : "ok"})
      .Increment();
  // Zero: relock timed no hold (a semaphore's permits, another process's id).
  if (e.held.count() > 0) {
    metrics_.hold_time.at(std::array<std::string_view, 2>{e.kind, group}).Observe(seconds(e.held));
  }
  if (auto ended = book_.released(e.key, e.kind)) {
    metrics_.holds.at(std::array<std::string_view, 2>{ended->kind, ended->group}).Decrement();
  }
}

void metrics_observer::on_renewal(const renewal_event& e) {
  std::lock_guard guard(mutex_);
  metrics_.renewals.at(std::array<std::string_view, 1>{e.error ? "error" : "ok"})
      .Increment(static_cast<double>(e.holds));
  metrics_.renewal_latency.Observe(seconds(e.latency));
}

void metrics_observer::on_loss(const loss_event& e) {
  std::lock_guard guard(mutex_);
  metrics_.losses.at(std::array{loss_word(e.reason)}).Increment();
  for (const auto& ended : book_.lost(e.key)) {
    metrics_.holds.at(std::array<std::string_view, 2>{ended.kind, ended.group}).Decrement();
  }
}

void metrics_observer::on_connection(const connection_event& e) {
  // Unlabelled counters: no cache to guard.
  if (e.change == connection_change::restored) {
    metrics_.reconnects.Increment();
  } else {
    metrics_.connection_losses.Increment();
  }
}

void metrics_observer::on_topology(const topology_event& e) {
  std::lock_guard guard(mutex_);
  metrics_.topology_changes.at(std::array{word(e.change)}).Increment();
}

void metrics_observer::on_replica_sync(const replica_sync_event& e) {
  metrics_.replica_sync.Observe(seconds(e.waited));
  if (e.error) metrics_.replica_sync_shortfalls.Increment();
}

void metrics_observer::on_subscription_refused(const subscription_event&) {
  metrics_.subscription_refusals.Increment();
}

void metrics_observer::on_queue(const queue_event& e) {
  std::lock_guard guard(mutex_);
  metrics_.queue_operations.at(std::array{word(e.operation), word(e.outcome)}).Increment();
  metrics_.queue_wait.at(std::array{word(e.operation)}).Observe(seconds(e.waited));
}

}  // namespace relock::prometheus_detail
