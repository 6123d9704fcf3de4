// SPDX-License-Identifier: Apache-2.0
// multi-3: one thread, an uncontended relock::multi_lock over 3 names, lock() + unlock() pairs
// back to back; beside it, on the same thread in the same window, one plain lock's pairs (the
// single-lock pair the multi-lock pair is set against).
//
// --url is one URL (every member on that server, one client) or 3 URLs separated by commas
// (member i on server i, one client per server: bench/run's multi-3-servers). multi_lock sends
// the try to every member at once and releases them all at once, so an uncontended pair should
// cost about one member's pair (two round trips) plus a small constant, not three. The single
// lock is on the first URL's server and client, as member 0.
//
// The two loops alternate in blocks of `block` pairs through the window, so both see the same
// moments of this drifting VM; each pair is timed on its own. pairs_per_s counts multi pairs per
// second spent in them. The server figures cover both loops: evalsha_per_op is per member pair
// (3 per multi pair, 1 per single pair), 2 expected.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <relock/client.hpp>
#include <relock/multi_lock.hpp>

#include "driver.hpp"

namespace relock_bench {

namespace {

constexpr int members = 3;

std::vector<std::string> split_urls(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= list.size();) {
    auto comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// redis://[user:pass@]host:port[/db] -> host:port (the probe's own parser takes a
// redis-cluster:// list of them and sums over the nodes).
std::string host_port(const std::string& url) {
  std::string rest = url;
  if (auto p = rest.find("://"); p != std::string::npos) rest = rest.substr(p + 3);
  if (auto p = rest.rfind('@'); p != std::string::npos) rest = rest.substr(p + 1);
  if (auto p = rest.find_first_of("/?"); p != std::string::npos) rest = rest.substr(0, p);
  return rest;
}

}  // namespace

result run_multi_lock(const options& o) {
  const auto urls = split_urls(o.url);
  if (urls.size() != 1 && urls.size() != members) {
    throw std::invalid_argument("multi-3: --url takes one URL or 3 separated by commas");
  }
  for (const auto& u : urls) {
    if (u.starts_with("redis-cluster://") || u.empty()) {
      throw std::invalid_argument("multi-3: plain redis:// URLs only, got '" + u + "'");
    }
  }
  std::vector<std::unique_ptr<relock::client>> clients;
  for (const auto& u : urls) {
    relock::config settings = client_settings(o);
    settings.url = u;
    clients.push_back(std::make_unique<relock::client>(settings));
  }
  std::vector<relock::mutex> parts;
  for (int i = 0; i < members; ++i) {
    parts.push_back(clients[i % clients.size()]->lock("bench:multi-3:" + std::to_string(i)));
  }
  relock::multi_lock multi(std::move(parts));
  auto single = clients.front()->lock("bench:multi-3:single");

  // Warm-up: scripts loaded on every server (the first EVALSHA meets NOSCRIPT), every
  // connection used, allocations and caches warm.
  for (int i = 0; i < 200; ++i) {
    multi.lock();
    multi.unlock();
    single.lock();
    single.unlock();
  }

  std::string probe_url = "redis-cluster://";
  for (std::size_t i = 0; i < urls.size(); ++i) probe_url += (i ? "," : "") + host_port(urls[i]);
  server_probe probe(urls.size() == 1 ? o.probe() : probe_url);

  constexpr std::int64_t max_pairs = 1'000'000;  // each loop
  constexpr int block = 50;
  samples multi_pair, single_pair;
  multi_pair.reserve(100'000);
  single_pair.reserve(100'000);
  std::int64_t multi_pairs = 0, single_pairs = 0, errors = 0;
  clock::duration multi_time{};
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point end) {
    auto now = clock::now();
    while (now < end && multi_pairs < max_pairs) {
      for (int i = 0; i < block && now < end; ++i, ++multi_pairs) {
        multi.lock();
        std::error_code ec;
        multi.unlock(ec);
        if (ec) ++errors;
        const auto after = clock::now();
        multi_pair.add(after - now);
        multi_time += after - now;
        now = after;
      }
      for (int i = 0; i < block && now < end; ++i, ++single_pairs) {
        single.lock();
        std::error_code ec;
        single.unlock(ec);
        if (ec) ++errors;
        const auto after = clock::now();
        single_pair.add(after - now);
        now = after;
      }
    }
  });

  result r = make_result(o);
  const double multi_s = std::chrono::duration<double>(multi_time).count();
  const double p50 = multi_pair.percentile_us(0.50);
  const double single_p50 = single_pair.percentile_us(0.50);
  r.set("pairs_per_s", multi_s > 0 ? static_cast<double>(multi_pairs) / multi_s : 0.0)
      .set("pair_p50_us", p50)
      .set("pair_p99_us", multi_pair.percentile_us(0.99))
      .set("pair_max_us", multi_pair.max_us())
      .set("pairs", multi_pairs)
      .set("single_pair_p50_us", single_p50)
      .set("single_pair_p99_us", single_pair.percentile_us(0.99))
      .set("single_pairs", single_pairs)
      .set("vs_single_pair", p50 / single_p50)
      .set("over_single_pair_us", p50 - single_p50)
      .set("members", static_cast<std::int64_t>(members))
      .set("servers", static_cast<std::int64_t>(urls.size()))
      .set("errors", errors);
  add_common(r, o, window, cpu, server, members * multi_pairs + single_pairs);
  return r;
}

}  // namespace relock_bench
