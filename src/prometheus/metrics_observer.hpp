// SPDX-License-Identifier: Apache-2.0
// The observer make_prometheus_observer returns: each event counted, binned or gauged into
// metric_set. Calls come on relock's I/O thread, one client's in order; one observer may serve
// several clients, whose I/O threads then call it at once, so one mutex guards the series'
// caches and the hold book. The label function runs outside it: it is the user's code.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include <prometheus/registry.h>
#include <relock/observer.hpp>
#include <relock/prometheus.hpp>

#include "prometheus/hold_book.hpp"
#include "prometheus/metric_set.hpp"

namespace relock::prometheus_detail {

class metrics_observer final : public observer {
 public:
  metrics_observer(::prometheus::Registry& registry, prometheus_options options);

  void on_acquire_start(const acquire_start_event& e) override;
  void on_acquire(const acquire_event& e) override;
  void on_release(const release_event& e) override;
  void on_renewal(const renewal_event& e) override;
  void on_loss(const loss_event& e) override;
  void on_connection(const connection_event& e) override;
  void on_topology(const topology_event& e) override;
  void on_replica_sync(const replica_sync_event& e) override;
  void on_subscription_refused(const subscription_event& e) override;
  void on_queue(const queue_event& e) override;

 private:
  // The name_group of `key`: empty when there is no label function.
  std::string group_of(std::string_view kind, std::string_view key) const;

  const prometheus_options options_;
  std::mutex mutex_;
  metric_set metrics_;  // guarded by mutex_ (the caches; the metrics are thread-safe)
  hold_book book_;      // guarded by mutex_
};

}  // namespace relock::prometheus_detail
