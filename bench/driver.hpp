// SPDX-License-Identifier: Apache-2.0
// relock_bench: one scenario, one repetition, one JSON line on stdout.
//
// Each scenario is a function from the command line's options to a `result` (an ordered list of
// JSON fields). Every loop ends on a count and on the clock; a blocked lock() is cancelled by a
// stop_token shortly after the window closes, so a lost wake-up costs a bounded time and shows
// up in the figures instead of hanging the run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <relock/config.hpp>

#include "cpu_halts.hpp"

namespace relock_bench {

using clock = std::chrono::steady_clock;

struct options {
  std::string scenario;
  std::string url = "redis://127.0.0.1:6379";
  std::string variant = "default";  // "async": uncontended and n-locks through async_lock
  int rep = 1;
  double seconds = 3.0;   // the measuring window (many-held: how long the locks are held)
  int threads = 8;        // contended scenarios, n-locks, rw-read, rw-mixed
  int locks = 10'000;     // many-held
  int connections = 0;    // command connections per client; 0: the library's default
  int busy_poll_us = -1;  // config::busy_poll; -1: the library's default
  int clients = 1;        // (fair-)handoff: relock::clients its threads are spread over
  bool observer = false;  // config::observer: one that counts and bins, as a metrics exporter
  // Where the server probe connects (a plain redis:// URL of the same server); empty: url. A
  // rediss:// --url needs it: the probe speaks plain RESP (bench/run gives the server's plain
  // port).
  std::string probe_url;
  const std::string& probe() const { return probe_url.empty() ? url : probe_url; }
};

// The client settings every driver starts from: the server, the pool size, busy polling.
relock::config client_settings(const options& o);

// A sample set's distribution in brief: (q, percentile in us) at each of cdf_quantiles, in order.
using distribution = std::vector<std::pair<double, double>>;

// The quantiles a distribution keeps (support.cpp): 0 (the minimum) ... 0.5 ... 0.999, 1 (the
// maximum), denser in the tail.
const std::vector<double>& cdf_quantiles();

// A percentile as samples::percentile_us returns it: the number (it converts to double, as
// percentile_us returned before), carrying the distribution of the samples it was taken from,
// which result::set writes beside the p50 of a pair or a handoff (see there). Every driver gets
// the distribution fields that way, without a line of its own.
class percentile {
 public:
  percentile(double us, std::shared_ptr<const distribution> cdf) : us_(us), cdf_(std::move(cdf)) {}
  operator double() const { return us_; }
  const std::shared_ptr<const distribution>& cdf() const { return cdf_; }

 private:
  double us_;
  std::shared_ptr<const distribution> cdf_;  // null when there were no samples
};

// Latency samples, kept whole (a window holds at most a few hundred thousand) so percentiles
// are exact rather than bucketed.
class samples {
 public:
  void reserve(std::size_t n) { ns_.reserve(n); }
  void add(clock::duration d) {
    ns_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  void merge(const samples& other) {
    ns_.insert(ns_.end(), other.ns_.begin(), other.ns_.end());
    sorted_ = false;
  }
  std::size_t count() const { return ns_.size(); }
  // Nearest-rank percentile in microseconds; q in [0, 1]. NaN when empty. Sorting (the first
  // call after the samples were taken) also notes the distribution at cdf_quantiles.
  percentile percentile_us(double q);
  double max_us();

 private:
  std::vector<std::int64_t> ns_;
  bool sorted_ = false;
  std::shared_ptr<const distribution> cdf_;  // of ns_ as last sorted
};

// One JSON line with fields in insertion order. NaN numbers print as null; a distribution as
// [[q, us], ...].
class result {
 public:
  using value = std::variant<std::nullptr_t, double, std::int64_t, std::string, distribution>;
  result& set(const std::string& name, value v);
  // A percentile's number; when the field is the p50 of a pair or of a handoff (pair_p50_us,
  // handoff_p50_us: the one place that says which), also its samples' distribution, as
  // pair_cdf_us / handoff_cdf_us ([[q, us], ...] at cdf_quantiles; bench/chart.py draws them).
  result& set(const std::string& name, const percentile& p);
  std::string json() const;

 private:
  std::vector<std::pair<std::string, value>> fields_;
};

// The calling process's CPU time (getrusage RUSAGE_SELF), user + system, in seconds.
double process_cpu_seconds();

// What the server saw during a window: its CPU and the commands it ran (from INFO), the
// statistics reset at the start (CONFIG RESETSTAT). A plain hiredis connection of its own, so it
// measures relock from outside. A redis-cluster:// URL gets one connection per node it names,
// and the figures are the sums over them (bench/run names every master).
class server_probe {
 public:
  explicit server_probe(const std::string& url);
  ~server_probe();
  server_probe(const server_probe&) = delete;
  server_probe& operator=(const server_probe&) = delete;

  void start();  // CONFIG RESETSTAT and note the server's CPU
  struct window {
    double cpu_seconds = 0;    // server user + system
    std::int64_t calls = 0;    // all calls but our own INFO / CONFIG, including the
                               // commands that scripts call (Redis 7 counts those too)
    std::int64_t evalsha = 0;  // calls of EVALSHA
    std::string per_command;   // "evalsha=2000,del=2000,...": calls per command
    std::map<std::string, std::int64_t> calls_of;  // the same, by command name
    std::size_t nodes = 1;                         // servers probed
    std::string evalsha_by_node;  // "127.0.0.1:7001=5000,...": where the scripts ran
    halts cpu_halts;              // the CPUs' halts over the window (cpu_halts.hpp)
  };
  window stop();
  std::int64_t dbsize();
  // INFO stats total_connections_received, summed over the nodes (connect counts the
  // connections a client opens with it).
  std::int64_t connections_received();

 private:
  struct node {
    std::string address;  // host:port
    void* context;        // redisContext*
  };
  std::string info(const node& n, const char* section);
  double cpu_seconds();
  std::vector<node> nodes_;
  double cpu_at_start_ = 0;
  std::vector<std::int64_t> idle_at_start_;
};

// A measured window (n-locks, one-lock, handoff, the async variant): resets the server's
// statistics (probe.start()), notes the client's CPU time and the clock, then calls work(end),
// end being o.seconds later; work sets the scenario's load going and returns once it has
// stopped. The figures span the opening to work's return.
struct window_figures {
  double seconds = 0;       // wall time
  double client_cpu_s = 0;  // this process's CPU time (process_cpu_seconds)
  server_probe::window server;
};
window_figures run_window(const options& o, server_probe& probe,
                          const std::function<void(clock::time_point end)>& work);

// For the workers of a window whose loops may block in lock() past its end: waits (polling
// every 5 ms) until each has counted itself in `finished` or `deadline` has passed, then
// requests `stop` (cancelling any lock() still waiting) and joins them all.
void join_or_cancel(std::vector<std::thread>& workers, const std::atomic<int>& finished,
                    clock::time_point deadline, std::stop_source& stop);

// Fields every scenario reports: client and server CPU over the window, commands per operation.
void add_common(result& r, const options& o, double window_s, double client_cpu_s,
                const server_probe::window& server, std::int64_t operations);

// A result with lib / variant / scenario / rep and every table field present (null until set),
// so every line has the same shape whatever the scenario.
result make_result(const options& o);

result run_uncontended(const options& o);
// n-locks; also cluster-n-locks, the same over a redis-cluster:// URL (its 8 names land on
// every master of a 3-master cluster).
result run_n_locks(const options& o);
result run_one_lock(const options& o);
result run_handoff(const options& o);
// The other lock kinds (issue #17): fair-handoff (handoff's loop on client.fair_lock; both
// check that every acquisition kept FIFO order), see handoff.cpp; fenced-uncontended
// (uncontended's loop with lock_and_get_token()), see uncontended.cpp.
result run_fair_handoff(const options& o);
result run_fenced_uncontended(const options& o);
result run_many_held(const options& o);
// The read-write lock, sync API: rw-read (T readers on one lock), rw-mixed (90 % reads, 10 %
// writes holding 1 ms): see read_write.cpp.
result run_rw_read(const options& o);
result run_rw_mixed(const options& o);
// --variant async of uncontended (n = 1) and n-locks (n = threads): see async_pairs.cpp.
result run_async_pairs(const options& o, int n);
// multi-3: an uncontended multi_lock over 3 names, one server or 3 (multi_lock.cpp).
result run_multi_lock(const options& o);
// The queues (queue.cpp): queue, offer + take pairs with threads/2 producers and the other
// threads consumers on one blocking_queue; queue-delayed, a delayed_queue's lateness at 1,000
// elements/s with delays over 0-2 s.
result run_queue(const options& o);
result run_queue_delayed(const options& o);
// semaphore (semaphore.cpp): T threads acquire(1) / release(1) on one semaphore of T/2 permits.
result run_semaphore(const options& o);
// latch (latch.cpp): T awaiters on one count_down_latch, opened by a coordinator, round after
// round; latch-ceiling, the same rounds with a raw PUBLISH to T raw SUBSCRIBE connections.
result run_latch(const options& o);
result run_latch_ceiling(const options& o);
// connect (connect.cpp): what a client costs to start, client after client: construction (every
// connection up, TLS handshakes included for rediss://), the first lock() + unlock(), and
// destruction.
result run_connect(const options& o);

// The scenario whose names and loops a deployment's scenario reuses: "cluster-n-locks" ->
// "n-locks", any other -> itself.
std::string base_scenario(const std::string& scenario);

}  // namespace relock_bench
