// SPDX-License-Identifier: Apache-2.0
// connect: what a client costs to start, measured client after client on one thread. Each
// round constructs a relock::client (construction returns once every connection is up: the
// command connections and the subscriber's, each with its TLS handshake over rediss://, and the
// SSL context made from the CA file), then makes one lock() + unlock() pair (the first pair: the
// scripts' first EVALSHA on fresh connections), then destroys the client. bench/run runs it
// with a redis:// URL (connect) and a rediss:// one (tls-connect), so the difference of the
// two connect p50 is what the handshakes cost a client; the server counts the connections
// (INFO stats total_connections_received over the window) to divide it by.
#include <cmath>
#include <cstdint>
#include <memory>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {

result run_connect(const options& o) {
  const relock::config settings = client_settings(o);
  constexpr std::int64_t max_clients = 2'000;
  samples connect, first_pair, close;
  auto round = [&](bool measured) {
    const auto t0 = clock::now();
    auto client = std::make_unique<relock::client>(settings);
    const auto t1 = clock::now();
    auto lock = client->lock("bench:connect");
    lock.lock();
    lock.unlock();
    const auto t2 = clock::now();
    client.reset();
    const auto t3 = clock::now();
    if (measured) {
      connect.add(t1 - t0);
      first_pair.add(t2 - t1);
      close.add(t3 - t2);
    }
  };
  // Warm-up: the library's code and the process's allocations, the server's script cache.
  for (int i = 0; i < 5; ++i) round(false);

  server_probe probe(o.probe());
  std::int64_t clients = 0, connections = 0;
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point end) {
    const auto before = probe.connections_received();
    for (auto now = clock::now(); clients < max_clients && now < end; now = clock::now()) {
      round(true);
      ++clients;
    }
    connections = probe.connections_received() - before;
  });

  result r = make_result(o);
  r.set("clients_per_s", static_cast<double>(clients) / window)
      .set("connect_p50_us", connect.percentile_us(0.50))
      .set("connect_p99_us", connect.percentile_us(0.99))
      .set("connect_max_us", connect.max_us())
      .set("first_pair_p50_us", first_pair.percentile_us(0.50))
      .set("first_pair_p99_us", first_pair.percentile_us(0.99))
      .set("close_p50_us", close.percentile_us(0.50))
      .set("close_p99_us", close.percentile_us(0.99))
      .set("clients", clients)
      .set("connections_per_client",
           clients > 0 ? static_cast<double>(connections) / static_cast<double>(clients)
                       : std::nan(""));
  add_common(r, o, window, cpu, server, clients);
  return r;
}

}  // namespace relock_bench
