// SPDX-License-Identifier: Apache-2.0
// relock_bench --scenario NAME --rep N --url URL [--seconds S] [--threads T] [--locks L]
//              [--connections C] [--busy-poll MICROSECONDS] [--observer on|off]
//              [--variant V] [--clients C] [--probe-url URL]
// Runs one scenario once and prints one JSON line. Exit codes: 0 done, 1 failed, 2 bad usage.
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>

#include "driver.hpp"

namespace {

using scenario_fn = relock_bench::result (*)(const relock_bench::options&);

const std::map<std::string, scenario_fn> scenarios = {
    {"uncontended", relock_bench::run_uncontended},
    {"n-locks", relock_bench::run_n_locks},
    {"one-lock", relock_bench::run_one_lock},
    {"handoff", relock_bench::run_handoff},
    {"fair-handoff", relock_bench::run_fair_handoff},
    {"fenced-uncontended", relock_bench::run_fenced_uncontended},
    {"many-held", relock_bench::run_many_held},
    {"rw-read", relock_bench::run_rw_read},
    {"rw-mixed", relock_bench::run_rw_mixed},
    // n-locks over a redis-cluster:// URL (bench/run starts a 3-master cluster).
    {"cluster-n-locks", relock_bench::run_n_locks},
    // A multi_lock over 3 names; --url one URL, or 3 comma-separated (one member per server).
    {"multi-3", relock_bench::run_multi_lock},
    // blocking_queue: offer + take pairs, --threads split into producers and consumers.
    {"queue", relock_bench::run_queue},
    // delayed_queue: lateness at 1,000 elements/s, delays over 0-2 s.
    {"queue-delayed", relock_bench::run_queue_delayed},
    // semaphore: --threads T acquire(1) + release(1) pairs on T/2 permits.
    {"semaphore", relock_bench::run_semaphore},
    // count_down_latch: --threads T awaiters, a coordinator opening it round after round.
    {"latch", relock_bench::run_latch},
    // bench/run's ceiling for latch: the same rounds over raw PUBLISH / SUBSCRIBE connections.
    {"latch-ceiling", relock_bench::run_latch_ceiling},
    // Clients started one after another: construction, first pair, destruction.
    {"connect", relock_bench::run_connect},
};

int usage(const char* why) {
  if (why) std::fprintf(stderr, "relock_bench: %s\n", why);
  std::fprintf(why ? stderr : stdout,
               "usage: relock_bench --scenario NAME --rep N --url URL [--seconds S]\n"
               "                    [--threads T] [--locks L] [--variant default|async]\n"
               "                    [--connections C] [--busy-poll MICROSECONDS]\n"
               "                    [--observer on|off]\n"
               "                    [--clients C] ((fair-)handoff: threads over C clients)\n"
               "                    [--probe-url URL] (the server probe's plain redis:// URL of\n"
               "                    the same server; default --url; needed with rediss://)\n"
               "scenarios: uncontended n-locks one-lock handoff many-held rw-read rw-mixed\n"
               "           fair-handoff fenced-uncontended\n"
               "           multi-3 (--url URL, or URL1,URL2,URL3: one member per server)\n"
               "           cluster-n-locks (n-locks; give a redis-cluster:// URL)\n"
               "           queue (--threads T: T/2 producers, the rest consumers) queue-delayed\n"
               "           semaphore (--threads T on T/2 permits) latch (--threads T awaiters)\n"
               "           latch-ceiling (latch's rounds on raw PUBLISH / SUBSCRIBE)\n"
               "           connect (clients started one after another: connect, first pair)\n"
               "prints one JSON line; exit 0 done, 1 failed, 2 bad usage\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  relock_bench::options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(nullptr);
      return 0;
    }
    if (i + 1 >= argc) return usage(("missing value for " + flag).c_str());
    std::string value = argv[++i];
    try {
      if (flag == "--scenario")
        o.scenario = value;
      else if (flag == "--rep")
        o.rep = std::stoi(value);
      else if (flag == "--url")
        o.url = value;
      else if (flag == "--seconds")
        o.seconds = std::stod(value);
      else if (flag == "--threads")
        o.threads = std::stoi(value);
      else if (flag == "--locks")
        o.locks = std::stoi(value);
      else if (flag == "--connections")
        o.connections = std::stoi(value);
      else if (flag == "--busy-poll")
        o.busy_poll_us = std::stoi(value);
      else if (flag == "--observer" && (value == "on" || value == "off"))
        o.observer = value == "on";
      else if (flag == "--variant")
        o.variant = value;
      else if (flag == "--clients")
        o.clients = std::stoi(value);
      else if (flag == "--probe-url")
        o.probe_url = value;
      else
        return usage(("unknown option " + flag).c_str());
    } catch (const std::exception&) {
      return usage(("bad value for " + flag + ": " + value).c_str());
    }
  }
  auto it = scenarios.find(o.scenario);
  if (it == scenarios.end()) return usage(("unknown scenario '" + o.scenario + "'").c_str());
  if (o.variant != "default" && o.variant != "async") return usage("--variant: default or async");
  const auto base = relock_bench::base_scenario(o.scenario);
  if (o.variant == "async" && base != "uncontended" && base != "n-locks") {
    return usage("--variant async exists for uncontended and (cluster-)n-locks only");
  }
  if (o.clients != 1 && o.scenario != "handoff" && o.scenario != "fair-handoff") {
    return usage("--clients exists for handoff and fair-handoff only");
  }
  if (o.clients < 1 || o.clients > o.threads) return usage("--clients must be in [1, --threads]");
  if (o.seconds <= 0 || o.seconds > 600 || o.threads < 1 || o.threads > 256 || o.locks < 1 ||
      o.connections < 0 || o.connections > 64 || o.busy_poll_us < -1 || o.busy_poll_us > 10'000) {
    return usage(
        "--seconds must be in (0, 600], --threads in [1, 256], --locks >= 1, "
        "--connections in [0, 64], --busy-poll in [0, 10000] (0: off)");
  }
  try {
    std::printf("%s\n", it->second(o).json().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relock_bench: %s: %s\n", o.scenario.c_str(), e.what());
    return 1;
  }
}
