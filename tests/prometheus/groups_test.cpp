// SPDX-License-Identifier: Apache-2.0
// prometheus_options: a label function that groups keys into name_group, one observer shared by
// two clients, and a prefix and constant labels on every metric.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include <relock/client.hpp>
#include <relock/prometheus.hpp>

#include "metrics_env.hpp"

using relock::test::count_of;
using relock::test::sample;
using relock::test::sum_of;

namespace {

class prometheus_groups : public relock::test::metrics_env {};

// "order:123" -> "order": the part before the first colon.
std::string before_colon(std::string_view, std::string_view key) {
  return std::string(key.substr(0, key.find(':')));
}

}  // namespace

TEST_F(prometheus_groups, a_label_function_groups_keys_and_two_clients_share_one_observer) {
  const auto s = settings({.label = before_colon});
  relock::client first(s);
  relock::client second(s);  // the same observer
  for (auto m : {first.lock("order:123"), second.lock("order:456")}) {
    m.lock();
    m.unlock();
  }
  auto user = first.fair_lock("user:1");
  user.lock();

  std::vector<sample> m;
  ASSERT_TRUE(scrape_until(m, [](const auto& s) {
    return sum_of(s, "relock_releases_total") == 2 && sum_of(s, "relock_holds") == 1;
  }));
  EXPECT_EQ(sum_of(m, "relock_acquisitions_total",
                   {{"kind", "lock"}, {"name_group", "order"}, {"outcome", "acquired"}}),
            2);
  EXPECT_EQ(count_of(m, "relock_acquisitions_total", {{"kind", "lock"}}), 1u);  // one series
  EXPECT_EQ(sum_of(m, "relock_hold_seconds_count", {{"kind", "lock"}, {"name_group", "order"}}), 2);
  EXPECT_EQ(sum_of(m, "relock_holds", {{"kind", "fair lock"}, {"name_group", "user"}}), 1);
  EXPECT_EQ(sum_of(m, "relock_holds", {{"kind", "lock"}, {"name_group", "order"}}), 0);
  // The keys themselves are no label value anywhere.
  for (const auto& sample : m) {
    for (const auto& [name, value] : sample.labels) {
      EXPECT_EQ(value.find(':'), std::string::npos) << sample.name << " " << name << "=" << value;
    }
  }
  user.unlock();
}

TEST_F(prometheus_groups, a_prefix_and_constant_labels_name_every_metric) {
  relock::client client(
      settings({.prefix = "billing_locks_", .constant_labels = {{"service", "billing"}}}));
  auto m = client.lock("invoice");
  m.lock();
  m.unlock();

  std::vector<sample> samples;
  ASSERT_TRUE(scrape_until(
      samples, [](const auto& s) { return sum_of(s, "billing_locks_releases_total") == 1; }));
  EXPECT_EQ(sum_of(samples, "billing_locks_acquisitions_total",
                   {{"kind", "lock"}, {"outcome", "acquired"}, {"service", "billing"}}),
            1);
  ASSERT_FALSE(samples.empty());
  for (const auto& s : samples) {
    if (s.name.starts_with("exposer_")) continue;  // the exposer's own
    EXPECT_EQ(s.name.rfind("billing_locks_", 0), 0u) << s.name;
    EXPECT_EQ(s.labels.count("service") == 1 ? s.labels.at("service") : "", "billing") << s.name;
  }
}
