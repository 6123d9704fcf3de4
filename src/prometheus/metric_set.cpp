// SPDX-License-Identifier: Apache-2.0
#include "prometheus/metric_set.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "prometheus/words.hpp"

namespace relock::prometheus_detail {

namespace {

namespace pm = ::prometheus;

// Registers one family; with InsertBehavior::Merge (the registry's default) a second observer
// on the same registry gets the first one's family back.
template <class Metric>
pm::Family<Metric>& family(pm::detail::Builder<Metric> builder, pm::Registry& registry,
                           const prometheus_options& options, std::string_view name,
                           std::string_view help) {
  return builder.Name(options.prefix + std::string(name))
      .Help(std::string(help))
      .Labels(options.constant_labels)
      .Register(registry);
}

pm::Family<pm::Counter>& counters(pm::Registry& r, const prometheus_options& o,
                                  std::string_view name, std::string_view help) {
  return family(pm::BuildCounter(), r, o, name, help);
}
pm::Family<pm::Gauge>& gauges(pm::Registry& r, const prometheus_options& o, std::string_view name,
                              std::string_view help) {
  return family(pm::BuildGauge(), r, o, name, help);
}
pm::Family<pm::Histogram>& histograms(pm::Registry& r, const prometheus_options& o,
                                      std::string_view name, std::string_view help) {
  return family(pm::BuildHistogram(), r, o, name, help);
}

// The kind's labels, name_group among them only when a label function gives it.
std::vector<std::string> by_kind(bool grouped, std::vector<std::string> more = {}) {
  std::vector<std::string> names{"kind", grouped ? "name_group" : ""};
  names.insert(names.end(), more.begin(), more.end());
  return names;
}

}  // namespace

metric_set::metric_set(pm::Registry& r, const prometheus_options& o, bool grouped)
    : acquire_wait(histograms(r, o, "acquire_wait_seconds",
                              "Time from an acquire's call to its end, tries and waits included"),
                   by_kind(grouped, {"outcome"}), o.wait_buckets),
      acquisitions(counters(r, o, "acquisitions_total", "Acquires ended, by outcome"),
                   by_kind(grouped, {"outcome"})),
      hold_time(histograms(r, o, "hold_seconds",
                           "How long this client held a lock, from its acquire to its release"),
                by_kind(grouped), o.hold_buckets),
      holds(gauges(r, o, "holds", "Holds taken and not yet released or lost"), by_kind(grouped)),
      waiters(gauges(r, o, "waiters", "Acquires begun and not yet ended"), by_kind(grouped)),
      releases(counters(r, o, "releases_total", "Releases ended, ok or with an error"),
               {"kind", "outcome"}),
      renewals(counters(r, o, "renewals_total", "Holds the watchdog renewed, or tried to"),
               {"outcome"}),
      renewal_latency(
          histograms(r, o, "renewal_latency_seconds", "Round trip of a watchdog renewal call")
              .Add({}, o.latency_buckets)),
      losses(counters(r, o, "losses_total", "Holds lost, by reason"), {"reason"}),
      reconnects(counters(r, o, "reconnects_total", "Connections restored after a loss").Add({})),
      connection_losses(
          counters(r, o, "connection_losses_total", "Connections that were up and failed").Add({})),
      topology_changes(counters(r, o, "topology_changes_total",
                                "Changes of the servers' layout that the client followed"),
                       {"change"}),
      replica_sync(histograms(r, o, "replica_sync_seconds",
                              "Time from a write to its replicas' acknowledgement (WAIT)")
                       .Add({}, o.latency_buckets)),
      replica_sync_shortfalls(
          counters(r, o, "replica_sync_shortfalls_total",
                   "Writes fewer replicas acknowledged in time than were asked for")
              .Add({})),
      subscription_refusals(
          counters(r, o, "subscription_refusals_total", "Subscriptions the server refused")
              .Add({})),
      queue_operations(counters(r, o, "queue_operations_total", "Queue operations ended"),
                       {"operation", "outcome"}),
      queue_wait(histograms(r, o, "queue_wait_seconds",
                            "A take's wait, or an offer's or a transfer's round trip"),
                 {"operation"}, o.wait_buckets) {
  for (std::string_view outcome : {"ok", "error"}) renewals.at(std::array{outcome});
  for (std::string_view reason : {"lock_lost", "renewal_failed"}) losses.at(std::array{reason});
  for (auto change : {topology_change::slot_moved, topology_change::new_master}) {
    topology_changes.at(std::array{word(change)});
  }
  for (auto op : {queue_operation::offer, queue_operation::take, queue_operation::transfer}) {
    for (auto outcome : {queue_outcome::done, queue_outcome::failed}) {
      queue_operations.at(std::array{word(op), word(outcome)});
    }
  }
}

}  // namespace relock::prometheus_detail
