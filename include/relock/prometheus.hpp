// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::make_prometheus_observer: relock's metrics in a prometheus-cpp registry. An optional
/// library of its own, `librelock_prometheus.so` (CMake: `find_package(relock COMPONENTS
/// prometheus)`, target relock::prometheus), built when prometheus-cpp is found; librelock.so
/// itself never depends on prometheus-cpp. docs/metrics.md lists every metric.
///
/// The observer registers relock's metric families in the registry when it is made, and counts
/// and bins what the client does into them from then on:
///
///     auto registry = std::make_shared<prometheus::Registry>();
///     prometheus::Exposer exposer("127.0.0.1:9464");
///     exposer.RegisterCollectable(registry);
///     relock::config settings;
///     settings.observer = relock::make_prometheus_observer(*registry);
///     relock::client client(settings);
///
/// Labels stay bounded: a lock's name is never a label value (names are often unbounded, a lock
/// per order id). Metrics about acquires and holds are labelled by the kind ("lock", "fair lock",
/// "semaphore"...) and, when prometheus_options::label is set, by the group it derives from the
/// name (`name_group`).
///
/// One observer may serve several clients (it guards its own state); two made on one registry
/// with the same prefix and constant labels share its families, and their counts add up. The
/// registry must outlive the observer, which writes into its families until the last client that
/// holds it is destroyed.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <relock/detail/export.hpp>
#include <relock/observer.hpp>

namespace prometheus {
class Registry;
}

namespace relock {

/// How make_prometheus_observer names, labels and bins relock's metrics. Every field has a
/// default: `{}` is "prefix relock_, labelled by kind only, the default buckets".
struct prometheus_options {
  /// Derives a bounded group from a key, for the `name_group` label: `"order:123"` and
  /// `"order:456"` both to `"order"`, say. Empty (the default): no `name_group` label, only the
  /// kind. Called on relock's I/O thread for each acquire and release: keep it short, and give a
  /// key the same group every time. An exception from it is caught; the key's group is then
  /// "unlabelled".
  std::function<std::string(std::string_view kind, std::string_view key)> label{};
  /// Put before every metric's name: relock_acquisitions_total. Letters, digits, `_` and `:`,
  /// not starting with a digit; may be empty.
  std::string prefix = "relock_";
  /// Labels every metric carries with the same value (`{"service", "billing"}`), as a
  /// prometheus::Labels. Not one of relock's own label names (kind, name_group, outcome, reason,
  /// change, operation).
  std::map<std::string, std::string> constant_labels{};
  /// Upper bounds, in seconds, of the buckets of acquire waits and queue waits; increasing.
  std::vector<double> wait_buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                   0.25,   0.5,   1,      2.5,   5,    10,    30};
  /// Upper bounds, in seconds, of the buckets of hold times; increasing.
  std::vector<double> hold_buckets{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1,
                                   5,     10,    30,   60,   300, 900, 3600};
  /// Upper bounds, in seconds, of the buckets of round trips (renewals, replica syncs);
  /// increasing.
  std::vector<double> latency_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                      0.025,  0.05,    0.1,    0.25,  0.5,    1};
};

/// An observer for config::observer that keeps relock's metrics in `registry`: it registers their
/// families there now (docs/metrics.md). `registry` must outlive the observer. Throws
/// relock::error with errc::invalid_argument for a bad prefix, constant label or bucket list, and
/// what prometheus-cpp throws when the registry already has one of the names as another type.
RELOCK_API std::shared_ptr<observer> make_prometheus_observer(prometheus::Registry& registry,
                                                              prometheus_options options = {});

}  // namespace relock
