// SPDX-License-Identifier: Apache-2.0
// One metric family's series, found by their label values without building a prometheus::Labels
// (a map of strings) per event: the family is asked once per combination of values, and the
// metric it hands back is remembered. prometheus-cpp keeps a metric at one address until it is
// removed from its family, which relock never does.
//
// A label whose name is empty is left out of the series (a `name_group` with no label function):
// its value must then be empty too, so the cache stays one entry per series.
//
// Thread-safety: none; its owner (metrics_observer) guards it.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/labels.h>

namespace relock::prometheus_detail {

template <class Metric>
class series {
 public:
  // `buckets`: a histogram's bucket bounds; ignored for other metrics.
  series(::prometheus::Family<Metric>& family, std::vector<std::string> names,
         std::vector<double> buckets = {})
      : family_(family), names_(std::move(names)), buckets_(std::move(buckets)) {}

  // The series with these label values, one per name, in the names' order; made on first use.
  template <std::size_t N>
  Metric& at(const std::array<std::string_view, N>& values) {
    assert(N == names_.size());
    if (auto it = cache_.find(values); it != cache_.end()) return *it->second;
    ::prometheus::Labels labels;
    for (std::size_t i = 0; i < N; ++i) {
      if (!names_[i].empty()) labels.emplace(names_[i], values[i]);
    }
    Metric* metric = nullptr;
    if constexpr (std::is_same_v<Metric, ::prometheus::Histogram>) {
      metric = &family_.Add(labels, buckets_);
    } else {
      metric = &family_.Add(labels);
    }
    cache_.emplace(std::vector<std::string>(values.begin(), values.end()), metric);
    return *metric;
  }

 private:
  // Orders a cached key (strings) and a looked-up one (views) alike, so a lookup copies nothing.
  struct values_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(),
          [](std::string_view x, std::string_view y) { return x < y; });
    }
  };

  ::prometheus::Family<Metric>& family_;
  std::vector<std::string> names_;
  std::vector<double> buckets_;
  std::map<std::vector<std::string>, Metric*, values_less> cache_;
};

}  // namespace relock::prometheus_detail
