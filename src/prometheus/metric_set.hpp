// SPDX-License-Identifier: Apache-2.0
// relock's metric families, registered in the user's registry under the options' prefix and
// constant labels: their names, types, help texts and label names, in one place
// (docs/metrics.md is their table). The unlabelled series, and the counters' series whose label
// values are few and known (loss reasons, renewal outcomes, topology changes, queue operations
// done or failed), are made at once: they read 0 before their first event, so a rate() or an
// alert on them starts from the beginning. The others appear with their first event.
//
// Thread-safety: none; its owner (metrics_observer) guards the series' caches. The metrics
// themselves are prometheus-cpp's, safe to update while the registry is collected.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <relock/prometheus.hpp>

#include "prometheus/series.hpp"

namespace relock::prometheus_detail {

struct metric_set {
  // Registers the families. `grouped`: a label function is set, so the kind's series also carry
  // name_group.
  metric_set(::prometheus::Registry& registry, const prometheus_options& options, bool grouped);

  // {kind, name_group, outcome}
  series<::prometheus::Histogram> acquire_wait;
  series<::prometheus::Counter> acquisitions;
  // {kind, name_group}
  series<::prometheus::Histogram> hold_time;
  series<::prometheus::Gauge> holds;
  series<::prometheus::Gauge> waiters;
  // {kind, outcome}
  series<::prometheus::Counter> releases;
  // {outcome}
  series<::prometheus::Counter> renewals;
  ::prometheus::Histogram& renewal_latency;
  // {reason}
  series<::prometheus::Counter> losses;
  ::prometheus::Counter& reconnects;
  ::prometheus::Counter& connection_losses;
  // {change}
  series<::prometheus::Counter> topology_changes;
  ::prometheus::Histogram& replica_sync;
  ::prometheus::Counter& replica_sync_shortfalls;
  ::prometheus::Counter& subscription_refusals;
  // {operation, outcome}
  series<::prometheus::Counter> queue_operations;
  // {operation}
  series<::prometheus::Histogram> queue_wait;
};

}  // namespace relock::prometheus_detail
