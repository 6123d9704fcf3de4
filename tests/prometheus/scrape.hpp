// SPDX-License-Identifier: Apache-2.0
// Reading metrics the way Prometheus does: an HTTP GET of the exposer's /metrics over a real
// socket, and the text exposition parsed into samples the tests sum over, as PromQL's sum() with
// label matchers would.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace relock::test {

struct sample {
  std::string name;  // with its _bucket, _count or _sum suffix for a histogram's
  std::map<std::string, std::string> labels;
  double value = 0;
};

// GET http://127.0.0.1:PORT/metrics (HTTP/1.0, read to the end, 10 s at most). Throws
// std::runtime_error when the exposer cannot be reached or does not answer 200.
std::string scrape(std::uint16_t port);

// The samples of a text exposition (version 0.0.4); comments skipped. Throws std::runtime_error
// on a line it cannot read.
std::vector<sample> parse_exposition(const std::string& text);

// The sum of the samples named `name` whose labels include `having`; 0 when there are none.
double sum_of(const std::vector<sample>& samples, std::string_view name,
              const std::map<std::string, std::string>& having = {});

// How many samples named `name` have labels including `having`.
std::size_t count_of(const std::vector<sample>& samples, std::string_view name,
                     const std::map<std::string, std::string>& having = {});

}  // namespace relock::test
