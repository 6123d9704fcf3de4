// SPDX-License-Identifier: Apache-2.0
// many-held: hold L locks (10,000) under the watchdog with a 1 s lease for the window (10 s),
// then release them. The figure is what reaches the server: EVALSHA calls during the window
// (INFO commandstats, reset at its start) are the renewals, as nothing else runs meanwhile.
// The watchdog's own count of scripts sent (read on the I/O thread) is a cross-check.
#include <atomic>
#include <cmath>
#include <future>
#include <memory>
#include <semaphore>
#include <thread>

#include <asio/post.hpp>
#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "driver.hpp"

namespace relock_bench {
namespace {

constexpr auto lease = std::chrono::milliseconds(1'000);
constexpr int in_flight = 512;  // async acquires / releases outstanding at once

std::size_t scripts_sent(const relock::client& client) {
  std::promise<std::size_t> sent;
  auto& core = *relock::detail::core_of(client);
  asio::post(core.io(), [&] { sent.set_value(core.watchdog().renewals_sent()); });
  return sent.get_future().get();
}

// Runs `start(i, done)` for every i with at most `in_flight` outstanding; returns the errors.
// The completions run on relock's I/O thread; what they touch is shared, so that it outlives
// the last of them even after this function has returned.
template <class Start>
std::int64_t for_all(int n, Start start) {
  struct progress {
    std::counting_semaphore<in_flight> slots{in_flight};
    std::atomic<int> left;
    std::atomic<std::int64_t> errors{0};
    std::promise<void> all_done;
  };
  auto p = std::make_shared<progress>();
  p->left = n;
  auto finished = p->all_done.get_future();
  for (int i = 0; i < n; ++i) {
    p->slots.acquire();
    start(i, [p](std::error_code ec) {
      if (ec) ++p->errors;
      p->slots.release();
      if (--p->left == 0) p->all_done.set_value();
    });
  }
  finished.get();
  return p->errors.load();
}

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

}  // namespace

result run_many_held(const options& o) {
  std::atomic<std::int64_t> lost{0};
  relock::config settings = client_settings(o);
  settings.watchdog_lease = lease;
  settings.on_lock_lost = [&](std::string_view, std::string_view, std::error_code) { ++lost; };
  relock::client client(settings);
  server_probe probe(o.probe());

  std::vector<relock::mutex> locks;
  locks.reserve(o.locks);
  for (int i = 0; i < o.locks; ++i) locks.push_back(client.lock("bench:many:" + std::to_string(i)));
  const auto me = relock::owner::unique();

  const auto a0 = clock::now();
  const auto acquire_errors =
      for_all(o.locks, [&](int i, auto done) { locks[i].async_lock(me, {}, std::move(done)); });
  const double acquire_s = seconds_since(a0);

  // The window opens after the first renewal tick has been answered: on a fresh server that
  // tick meets NOSCRIPT and loads the renewal script, which is start-up, not steady state.
  const auto first_tick_deadline = clock::now() + 3 * lease;
  while (scripts_sent(client) == 0 && clock::now() < first_tick_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(lease / 5);

  const std::size_t sent0 = scripts_sent(client);
  probe.start();
  const double cpu0 = process_cpu_seconds();
  const auto t0 = clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  const double window = seconds_since(t0);
  const double cpu = process_cpu_seconds() - cpu0;
  const auto server = probe.stop();
  const std::size_t sent = scripts_sent(client) - sent0;
  const std::int64_t keys_at_end = probe.dbsize();

  const auto r0 = clock::now();
  const auto release_errors =
      for_all(o.locks, [&](int i, auto done) { locks[i].async_unlock(me, std::move(done)); });
  const double release_s = seconds_since(r0);

  const double period_s = std::chrono::duration<double>(lease).count() / 3;
  const double periods = window / period_s;
  const double per_period = static_cast<double>(server.evalsha) / periods;
  // The renewal script checks every key once per tick (HEXISTS), so the server also tells how
  // many ticks ran: a tick is re-armed after the previous one, so it drifts past lease/3.
  const auto hexists = server.calls_of.contains("hexists") ? server.calls_of.at("hexists") : 0;
  const double ticks = static_cast<double>(hexists) / o.locks;
  result r = make_result(o);
  r.set("held", static_cast<std::int64_t>(o.locks))
      .set("renewal_cmds", server.evalsha)
      .set("renewal_cmds_per_s", static_cast<double>(server.evalsha) / window)
      .set("renewal_period_ms", period_s * 1000)
      .set("renewal_cmds_per_period", per_period)
      .set("locks_per_renewal_cmd", static_cast<double>(o.locks) / per_period)
      .set("ticks", ticks)
      .set("renewal_cmds_per_tick", ticks > 0 ? server.evalsha / ticks : std::nan(""))
      .set("watchdog_scripts_sent", static_cast<std::int64_t>(sent))
      .set("keys_at_end", keys_at_end)
      .set("lost", lost.load())
      .set("acquire_s", acquire_s)
      .set("release_s", release_s)
      .set("errors", acquire_errors + release_errors);
  add_common(r, o, window, cpu, server, server.evalsha);
  return r;
}

}  // namespace relock_bench
