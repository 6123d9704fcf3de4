// SPDX-License-Identifier: Apache-2.0
// A server, a raw client beside it, and a registry served by a real prometheus::Exposer on a
// free loopback port: what the metrics tests start from. They read their figures by scraping it,
// as Prometheus would. Members go in reverse: the exposer stops serving before the registry goes;
// the clients a test makes (locals) are gone before either.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <relock/client.hpp>
#include <relock/prometheus.hpp>

#include "scrape.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

namespace relock::test {

class metrics_env : public ::testing::Test {
 protected:
  metrics_env() { exposer_.RegisterCollectable(registry_); }

  relock::config settings(prometheus_options options = {}) {
    auto s = settings_for(server_);
    s.observer = make_prometheus_observer(*registry_, std::move(options));
    return s;
  }

  // The exposer's port: it was asked for port 0, so the kernel chose one.
  std::uint16_t port() const {
    const auto ports = exposer_.GetListeningPorts();
    if (ports.empty()) throw std::runtime_error("the exposer listens on no port");
    return static_cast<std::uint16_t>(ports.front());
  }

  std::vector<sample> scraped() const { return parse_exposition(scrape(port())); }

  // Scrapes until `condition` holds for the samples (true), or `timeout` passes (false);
  // `samples` is left with the last scrape.
  template <class Condition>
  bool scrape_until(std::vector<sample>& samples, Condition condition,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return wait_until(
        [&] {
          samples = scraped();
          return condition(samples);
        },
        timeout, std::chrono::milliseconds(20));
  }

  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
  std::shared_ptr<::prometheus::Registry> registry_ = std::make_shared<::prometheus::Registry>();
  ::prometheus::Exposer exposer_{"127.0.0.1:0", 1};
};

}  // namespace relock::test
