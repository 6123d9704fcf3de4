// SPDX-License-Identifier: Apache-2.0
// relock demo: N worker processes increment one counter file, read-pause-write, under one lock.
// Without the lock the count would come out short; with it, it is exact. Then throughput and
// the latency of handing the lock from one process to another.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <utility>

#include "cli.hpp"
#include "demo.hpp"
#include "demo_dir.hpp"
#include "output.hpp"
#include "private_redis.hpp"

extern char** environ;

namespace relock_cli {
namespace {

using steady = std::chrono::steady_clock;

bool answers(const std::string& url) {
  relock::config probe;
  probe.url = url;
  probe.connect_timeout = std::chrono::milliseconds(500);
  try {
    relock::client c(probe);
    return true;
  } catch (const relock::error&) {
    return false;
  }
}

// Where the demo runs: the URL given (--url, $RELOCK_URL), else the default URL when something
// answers there, else a private Redis. A cluster demo runs on a cluster: the one given, else its
// own (the default URL names one server). A TLS demo runs over TLS: the rediss:// URL given,
// else a private server that speaks nothing else (the default URL is plain).
std::unique_ptr<private_redis> private_redis_for(const global_options& given,
                                                 const demo_options& o) {
  if (o.cluster && given.url_given && !given.url.starts_with("redis-cluster://") &&
      !given.url.starts_with("rediss-cluster://")) {
    throw failure(exit_usage, "demo --cluster: " + shown_url(given.url) +
                                  " is no redis-cluster:// URL; give one, or none for a private "
                                  "cluster");
  }
  if (o.tls && given.url_given && !tls_url(given.url)) {
    throw failure(exit_usage, "demo --tls: " + shown_url(given.url) +
                                  " is no rediss:// URL; give one, or none for a private server "
                                  "over TLS");
  }
  if (o.tls && o.cluster && !given.url_given) {
    throw failure(exit_usage,
                  "demo --tls --cluster: the demo makes no private cluster over TLS; give "
                  "--url rediss-cluster://HOST:PORT,..., or leave out one of the two");
  }
  if (given.url_given || (!o.cluster && !o.tls && answers(given.url))) return nullptr;
  if (o.cluster) {
    auto own = std::make_unique<private_redis>(private_redis::shape::cluster);
    std::cerr << "relock demo: started a private Redis Cluster (3 masters) at " << own->url()
              << " for the demo\n";
    return own;
  }
  if (o.tls) {
    auto own = std::make_unique<private_redis>(private_redis::shape::tls_server);
    std::cerr << "relock demo: started a private redis-server at " << own->url()
              << " for the demo, TLS only, its certificate from a throwaway CA (" << own->ca_file()
              << ")\n";
    return own;
  }
  auto own = std::make_unique<private_redis>(private_redis::shape::server);
  std::cerr << "relock demo: nothing answers on " << shown_url(given.url)
            << "; started a private redis-server at " << own->url() << " for the demo\n";
  return own;
}

// Connects once, before any worker: an unreachable server is one clear error, not one per
// worker. Returns the node that serves `name` (in a cluster, the master of its slot).
std::string serving_node(const global_options& g, const std::string& name) {
  auto client = connect(g, make_config(g));
  try {
    return client.inspect(name).node;
  } catch (const relock::error& e) {
    fail_with(g, e, "demo");
  }
}

// Workers are this binary again, as real separate processes with the signal mask relock
// started with (the demo itself blocks the stop signals to clean up when they come). The URL
// goes in their environment, not on their command line, where `ps` would show its password;
// the TLS settings go there too, as their $RELOCK_TLS_* twins, the demo's own replacing any
// inherited. Turning verification off stays a flag, as it is for relock itself.
pid_t spawn_worker(const global_options& g, const demo_options& o, int index,
                   const sigset_t& mask) {
  // The binary's real path, so `ps` shows the workers as relock, not as "exe".
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) std::strcpy(self, "/proc/self/exe");
  std::vector<std::string> args{self};
  if (g.watchdog_seconds) args.insert(args.end(), {"--watchdog-timeout", *g.watchdog_seconds});
  if (g.tls.insecure_skip_verify) args.push_back("--tls-insecure-skip-verify");
  args.insert(args.end(), {"demo-worker", "--iterations", std::to_string(o.iterations), "--worker",
                           std::to_string(index), "--prefix", o.prefix, "--dir", o.dir});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env{"RELOCK_URL=" + g.url};
  const std::pair<const char*, const given_setting*> tls[] = {
      {"RELOCK_TLS_CA=", &g.tls.ca},
      {"RELOCK_TLS_CERT=", &g.tls.cert},
      {"RELOCK_TLS_KEY=", &g.tls.key},
      {"RELOCK_TLS_SERVER_NAME=", &g.tls.server_name}};
  for (const auto& [variable, setting] : tls) {
    if (setting->given()) env.push_back(variable + setting->value);
  }
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (!entry.starts_with("RELOCK_URL=") && !entry.starts_with("RELOCK_TLS_")) {
      env.emplace_back(entry);
    }
  }
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw failure(exit_usage, "demo: cannot start worker processes");
  return pid;
}

// The running workers; any still running when it goes (an error, an interrupt) are stopped.
struct worker_group {
  std::vector<pid_t> pids;
  ~worker_group() {
    for (pid_t p : pids)
      if (p != 0) kill(p, SIGTERM);
    for (pid_t p : pids)
      if (p != 0) waitpid(p, nullptr, 0);
  }
  // Reaps the ones that ended; returns how many of those failed.
  int reap(std::size_t& running) {
    int failed = 0;
    for (auto& pid : pids) {
      int status = 0;
      if (pid != 0 && waitpid(pid, &status, WNOHANG) == pid) {
        pid = 0;
        --running;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      }
    }
    return failed;
  }
};

double percentile_us(std::vector<std::int64_t> ns, double p) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ns.size())));
  return static_cast<double>(ns[std::max<std::size_t>(rank, 1) - 1]) / 1000.0;
}

// Handoffs: consecutive holds, in time order, by different processes.
void measure_handoffs(const demo_options& o, demo_result& r) {
  struct hold {
    int worker;
    std::int64_t acquired, released;
  };
  std::vector<hold> holds;
  for (int w = 0; w < o.workers; ++w) {
    std::istringstream in(demo::read_holds(o.dir, w));
    hold h{};
    while (in >> h.worker >> h.acquired >> h.released) holds.push_back(h);
  }
  std::sort(holds.begin(), holds.end(),
            [](const hold& a, const hold& b) { return a.acquired < b.acquired; });
  std::vector<std::int64_t> handoffs;
  for (std::size_t i = 1; i < holds.size(); ++i) {
    if (holds[i].worker != holds[i - 1].worker) {
      handoffs.push_back(holds[i].acquired - holds[i - 1].released);
    }
  }
  r.acquisitions = holds.size();
  r.handoffs = handoffs.size();
  r.handoff_p50_us = percentile_us(handoffs, 0.50);
  r.handoff_p99_us = percentile_us(handoffs, 0.99);
}

}  // namespace

int demo_command(const global_options& given, const demo_options& options) {
  // Blocked before any thread starts; taken with sigtimedwait below, so an interrupt stops the
  // workers and the private server instead of leaving them behind.
  sigset_t stop_signals, started_mask;
  sigemptyset(&stop_signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, s);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &started_mask);

  global_options g = given;
  const auto own = private_redis_for(given, options);
  if (own) g.url = own->url();
  if (own && !own->ca_file().empty()) {
    // Our own server, our own CA: settings meant for other servers have no say here.
    g.tls = tls_options{};
    g.tls.ca = {own->ca_file(), "the demo's CA"};
  }
  demo_options o = options;
  o.prefix = "relock-demo:" + std::to_string(getpid());

  demo_result r;
  r.node = serving_node(g, demo::lock_name(o.prefix));
  const demo_dir dir;  // destroyed after the workers are stopped
  o.dir = dir.path();
  r.url = shown_url(g.url);
  r.private_server = own != nullptr;
  r.workers = o.workers;
  r.iterations = o.iterations;
  r.expected = static_cast<std::int64_t>(o.workers) * o.iterations;
  const auto started = steady::now();
  worker_group workers;
  for (int w = 0; w < o.workers; ++w) workers.pids.push_back(spawn_worker(g, o, w, started_mask));

  const bool terminal = isatty(STDERR_FILENO) != 0;
  auto last_line = started;
  int failed = 0;
  for (std::size_t running = workers.pids.size(); running > 0;) {
    const timespec tick{0, 100'000'000};  // progress every 100 ms
    if (int sig = sigtimedwait(&stop_signals, nullptr, &tick); sig > 0) {
      if (terminal) std::cerr << "\n";  // end the progress line
      throw failure(128 + sig, std::string("demo: stopped by ") + strsignal(sig));
    }
    failed += workers.reap(running);
    // A terminal gets one line redrawn; a pipe or log a line a second.
    if (terminal || steady::now() - last_line >= std::chrono::seconds(1)) {
      last_line = steady::now();
      std::cerr << (terminal ? "\r" : "") << "relock demo: " << demo::read_counter(o.dir) << " of "
                << r.expected << " increments by " << o.workers << " processes"
                << (terminal ? "" : "\n") << std::flush;
    }
  }
  r.seconds = std::chrono::duration<double>(steady::now() - started).count();
  if (terminal) std::cerr << "\n";
  if (failed > 0)
    throw failure(exit_usage, "demo: " + std::to_string(failed) + " of " +
                                  std::to_string(o.workers) + " workers failed");

  r.count = demo::read_counter(o.dir);
  measure_handoffs(o, r);
  print(r, g.json);
  return r.count == r.expected ? exit_ok : exit_conflict;
}

}  // namespace relock_cli
