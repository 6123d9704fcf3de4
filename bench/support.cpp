// SPDX-License-Identifier: Apache-2.0
// Measurement helpers shared by the scenarios: samples, the JSON line, CPU time, the measured
// window (the server probe is in server_probe.cpp).
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "driver.hpp"

#include <relock/observer.hpp>

namespace relock_bench {

const std::vector<double>& cdf_quantiles() {
  static const std::vector<double> q{0,   0.01, 0.02, 0.05, 0.1,   0.2,   0.25,
                                     0.3, 0.4,  0.5,  0.6,  0.7,   0.75,  0.8,
                                     0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1};
  return q;
}

namespace {

// Nearest rank in sorted nanoseconds (not empty), in microseconds.
double nearest_rank_us(const std::vector<std::int64_t>& sorted, double q) {
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

// The fields whose percentile carries its distribution into the line: a p50 field's name and
// the distribution's.
constexpr std::pair<const char*, const char*> kept_distributions[] = {
    {"pair_p50_us", "pair_cdf_us"},
    {"handoff_p50_us", "handoff_cdf_us"},
};

void append_number(std::string& out, double d) {
  if (std::isfinite(d)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", d);
    out += buf;
  } else {
    out += "null";
  }
}

}  // namespace

percentile samples::percentile_us(double q) {
  if (ns_.empty()) return {std::nan(""), nullptr};
  if (!sorted_) {
    std::sort(ns_.begin(), ns_.end());
    sorted_ = true;
    auto cdf = std::make_shared<distribution>();
    for (double at : cdf_quantiles()) cdf->emplace_back(at, nearest_rank_us(ns_, at));
    cdf_ = std::move(cdf);
  }
  return {nearest_rank_us(ns_, q), cdf_};
}

double samples::max_us() { return percentile_us(1.0); }

result& result::set(const std::string& name, value v) {
  for (auto& [n, old] : fields_) {
    if (n == name) {
      old = std::move(v);
      return *this;
    }
  }
  fields_.emplace_back(name, std::move(v));
  return *this;
}

result& result::set(const std::string& name, const percentile& p) {
  set(name, static_cast<double>(p));
  for (const auto& [p50, cdf] : kept_distributions) {
    if (name == p50) {
      if (p.cdf()) {
        set(cdf, *p.cdf());
      } else {
        set(cdf, nullptr);
      }
    }
  }
  return *this;
}

std::string result::json() const {
  std::string out = "{";
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ", ";
    out += '"' + fields_[i].first + "\": ";
    const value& v = fields_[i].second;
    if (std::holds_alternative<std::nullptr_t>(v)) {
      out += "null";
    } else if (auto d = std::get_if<double>(&v)) {
      append_number(out, *d);
    } else if (auto points = std::get_if<distribution>(&v)) {
      out += '[';
      for (std::size_t j = 0; j < points->size(); ++j) {
        if (j) out += ", ";
        out += '[';
        append_number(out, (*points)[j].first);
        out += ", ";
        append_number(out, (*points)[j].second);
        out += ']';
      }
      out += ']';
    } else if (auto n = std::get_if<std::int64_t>(&v)) {
      out += std::to_string(*n);
    } else {
      out += '"';
      for (char c : std::get<std::string>(v)) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
  }
  return out + "}";
}

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

window_figures run_window(const options& o, server_probe& probe,
                          const std::function<void(clock::time_point end)>& work) {
  probe.start();
  const double cpu0 = process_cpu_seconds();
  const auto t0 = clock::now();
  const auto end =
      t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.seconds));
  work(end);
  window_figures w;
  w.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  w.client_cpu_s = process_cpu_seconds() - cpu0;
  w.server = probe.stop();
  return w;
}

void join_or_cancel(std::vector<std::thread>& workers, const std::atomic<int>& finished,
                    clock::time_point deadline, std::stop_source& stop) {
  while (finished.load() < static_cast<int>(workers.size()) && clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.request_stop();
  for (auto& w : workers) w.join();
}

result make_result(const options& o) {
  result r;
  r.set("lib", std::string("relock"))
      .set("variant", o.variant)
      .set("scenario", o.scenario)
      .set("rep", static_cast<std::int64_t>(o.rep));
  for (const char* f : {"pairs_per_s", "acq_per_s", "pair_p50_us", "pair_p99_us", "handoff_p50_us",
                        "handoff_p99_us", "handoffs_per_s", "wait_p50_us", "wait_p99_us",
                        "wait_max_us", "rtt_p50_us"}) {
    r.set(f, nullptr);
  }
  return r;
}

void add_common(result& r, const options& o, double window_s, double client_cpu_s,
                const server_probe::window& server, std::int64_t operations) {
  (void)o;
  r.set("window_s", window_s);
  r.set("client_cpu_pct", 100.0 * client_cpu_s / window_s);
  r.set("server_cpu_pct", 100.0 * server.cpu_seconds / window_s);
  auto per_op = [&](std::int64_t n) {
    return operations > 0 ? static_cast<double>(n) / static_cast<double>(operations) : std::nan("");
  };
  r.set("evalsha_per_op", per_op(server.evalsha));
  if (server.cpu_halts.mine >= 0) {
    r.set("client_cpu_halts_per_op", per_op(server.cpu_halts.mine));
    r.set("other_cpu_halts_per_op", per_op(server.cpu_halts.others));
  }
  r.set("server_calls_per_op", per_op(server.calls));
  r.set("server_calls", server.per_command);
  if (server.nodes > 1) {
    r.set("server_nodes", static_cast<std::int64_t>(server.nodes));
    r.set("evalsha_by_node", server.evalsha_by_node);
  }
}

std::string base_scenario(const std::string& scenario) {
  const std::string cluster = "cluster-";
  return scenario.starts_with(cluster) ? scenario.substr(cluster.size()) : scenario;
}

namespace {

// What a metrics exporter does with each event: count it (a start too, for a waiters gauge)
// by outcome and put its time in a
// histogram's bucket (powers of two of microseconds). On relock's I/O thread only, as every
// observer call: plain counters.
class counting_observer : public relock::observer {
 public:
  void on_acquire_start(const relock::acquire_start_event&) override { ++started_; }
  void on_acquire(const relock::acquire_event& e) override {
    ++acquires_[static_cast<std::size_t>(e.outcome)];
    ++wait_buckets_[bucket(e.waited)];
    tries_ += static_cast<std::uint64_t>(e.tries);
  }
  void on_release(const relock::release_event& e) override {
    ++releases_[e.error ? 1 : 0];
    ++hold_buckets_[bucket(e.held)];
  }
  void on_renewal(const relock::renewal_event& e) override { renewed_ += e.holds; }
  void on_loss(const relock::loss_event&) override { ++losses_; }

 private:
  static std::size_t bucket(std::chrono::microseconds t) {
    std::size_t b = 0;
    for (auto us = t.count(); us > 1 && b + 1 < buckets; us /= 2) ++b;
    return b;
  }
  static constexpr std::size_t buckets = 32;
  std::array<std::uint64_t, 4> acquires_{};
  std::array<std::uint64_t, 2> releases_{};
  std::array<std::uint64_t, buckets> wait_buckets_{}, hold_buckets_{};
  std::uint64_t started_ = 0, tries_ = 0, renewed_ = 0, losses_ = 0;
};

}  // namespace

relock::config client_settings(const options& o) {
  relock::config settings;
  if (o.observer) settings.observer = std::make_shared<counting_observer>();
  settings.url = o.url;
  if (o.connections > 0) settings.command_connections = static_cast<std::size_t>(o.connections);
  if (o.busy_poll_us >= 0) settings.busy_poll = std::chrono::microseconds(o.busy_poll_us);
  return settings;
}

}  // namespace relock_bench
