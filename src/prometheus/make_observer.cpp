// SPDX-License-Identifier: Apache-2.0
// make_prometheus_observer: the options checked before any family is registered, so a mistake
// leaves the registry as it was and says what was wrong in relock's words.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <relock/errors.hpp>
#include <relock/prometheus.hpp>

#include "prometheus/metrics_observer.hpp"

namespace relock {

namespace {

// Prometheus's rule for names: [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, without ':' for labels.
// ASCII only, whatever the locale says a letter is.
bool valid_name(std::string_view name, bool colon_allowed) {
  auto letter = [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (colon_allowed && c == ':');
  };
  auto fits = [&](char c) { return letter(c) || (c >= '0' && c <= '9'); };
  return std::all_of(name.begin(), name.end(), fits) && (name.empty() || letter(name.front()));
}

void check_buckets(const std::vector<double>& bounds, std::string_view which) {
  const bool finite =
      std::all_of(bounds.begin(), bounds.end(), [](double b) { return std::isfinite(b); });
  const bool increasing =
      std::adjacent_find(bounds.begin(), bounds.end(), std::greater_equal<>()) == bounds.end();
  if (bounds.empty() || !finite || !increasing) {
    throw error(errc::invalid_argument, "prometheus_options::" + std::string(which) +
                                            ": bucket bounds must be finite, increasing, and at "
                                            "least one");
  }
}

void check(const prometheus_options& o) {
  if (!valid_name(o.prefix, true)) {
    throw error(errc::invalid_argument, "prometheus_options::prefix '" + o.prefix +
                                            "' is no metric name start ([a-zA-Z_:][a-zA-Z0-9_:]*)");
  }
  // relock's own label names: a constant one of the same name would give a series two values.
  constexpr std::array<std::string_view, 6> ours{"kind",   "name_group", "outcome",
                                                 "reason", "change",     "operation"};
  for (const auto& [name, value] : o.constant_labels) {
    if (name.empty() || !valid_name(name, false) || name.starts_with("__") ||
        std::find(ours.begin(), ours.end(), name) != ours.end()) {
      throw error(errc::invalid_argument,
                  "prometheus_options::constant_labels: '" + name +
                      "' is no label name of its own ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "
                      "__, not one of relock's)");
    }
  }
  check_buckets(o.wait_buckets, "wait_buckets");
  check_buckets(o.hold_buckets, "hold_buckets");
  check_buckets(o.latency_buckets, "latency_buckets");
}

}  // namespace

std::shared_ptr<observer> make_prometheus_observer(prometheus::Registry& registry,
                                                   prometheus_options options) {
  check(options);
  return std::make_shared<prometheus_detail::metrics_observer>(registry, std::move(options));
}

}  // namespace relock
