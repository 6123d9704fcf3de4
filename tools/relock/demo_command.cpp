// relock demo: N worker processes increment one counter, read-pause-write, under one lock.
// Without the lock the count comes out short; with it, exact. Then throughput and handoffs.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "private_redis.hpp"
#include "redis_reads.hpp"

extern char** environ;

namespace relock_cli {
namespace {

using steady = std::chrono::steady_clock;
constexpr const char* lock_name = "relock:demo";
constexpr const char* counter_key = "relock:demo:counter";
constexpr const char* intervals_key = "relock:demo:intervals";

std::int64_t now_ns() { return steady::now().time_since_epoch().count(); }

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

pid_t spawn_worker(const std::string& url, int iterations, int worker) {
  std::vector<std::string> args{"/proc/self/exe", "--url",      url,
                                "demo-worker",    "--iterations", std::to_string(iterations),
                                "--worker",       std::to_string(worker)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw failure(exit_usage, "demo: cannot start worker processes");
  }
  return pid;
}

double percentile_us(std::vector<std::int64_t> ns, double p) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  auto i = static_cast<std::size_t>(p * static_cast<double>(ns.size() - 1));
  return static_cast<double>(ns[i]) / 1000.0;
}

}  // namespace

int demo_worker(const std::string& url, int iterations, int worker) {
  relock::config settings;
  settings.url = url;
  relock::client client(settings);
  auto lock = client.lock(lock_name);
  std::ostringstream intervals;
  for (int i = 0; i < iterations; ++i) {
    std::unique_lock<relock::Lock> guard(lock);
    const auto acquired = now_ns();
    auto value = command(client, {"GET", counter_key});
    const std::int64_t n = value.is_nil() ? 0 : std::stoll(value.str);
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the unsafe gap
    command(client, {"SET", counter_key, std::to_string(n + 1)});
    intervals << worker << ' ' << acquired << ' ' << now_ns() << '\n';
  }
  command(client, {"RPUSH", intervals_key, intervals.str()});
  return exit_ok;
}

int demo_command(const global_options& g, int workers, int iterations) {
  std::unique_ptr<private_redis> own;
  std::string url = g.url;
  if (!g.url_given && !answers(url)) {
    own = std::make_unique<private_redis>();
    url = own->url();
    std::cerr << "relock demo: nothing answers on " << g.url << "; started a private Redis at "
              << url << "\n";
  }
  global_options here = g;
  here.url = url;
  auto client = connect(here, make_config(here));
  command(client, {"DEL", counter_key, intervals_key, lock_name});

  const std::int64_t expected = static_cast<std::int64_t>(workers) * iterations;
  const auto started = steady::now();
  std::vector<pid_t> pids;
  for (int w = 0; w < workers; ++w) pids.push_back(spawn_worker(url, iterations, w));
  int failed_workers = 0;
  const bool show_progress = !g.json && isatty(STDERR_FILENO);  // a \r line is for terminals
  for (std::size_t running = pids.size(); running > 0;) {
    for (auto& pid : pids) {
      int status = 0;
      if (pid != 0 && waitpid(pid, &status, WNOHANG) == pid) {
        pid = 0;
        --running;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_workers;
      }
    }
    if (show_progress) {
      auto count = command(client, {"GET", counter_key});
      std::cerr << "\rrelock demo: " << (count.is_nil() ? "0" : count.str) << "/" << expected
                << " increments by " << workers << " processes" << std::flush;
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // progress tick
  }
  const double elapsed = std::chrono::duration<double>(steady::now() - started).count();
  if (show_progress) std::cerr << "\n";

  auto count_reply = command(client, {"GET", counter_key});
  const std::int64_t count = count_reply.is_nil() ? 0 : std::stoll(count_reply.str);
  struct hold {
    int worker;
    std::int64_t acquired, released;
  };
  std::vector<hold> holds;
  for (auto& chunk : command(client, {"LRANGE", intervals_key, "0", "-1"}).elements) {
    std::istringstream in(chunk.str);
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
  command(client, {"DEL", counter_key, intervals_key});

  const double per_second = static_cast<double>(holds.size()) / elapsed;
  if (g.json) {
    std::cout << nlohmann::json{{"workers", workers},          {"iterations", iterations},
                                {"count", count},              {"expected", expected},
                                {"seconds", elapsed},          {"acquisitions_per_s", per_second},
                                {"handoffs", handoffs.size()}, {"handoff_p50_us", percentile_us(handoffs, 0.50)},
                                {"handoff_p99_us", percentile_us(handoffs, 0.99)},
                                {"url", url}}
                     .dump()
              << "\n";
  } else {
    std::cout << std::fixed << std::setprecision(1) << "count " << count << " of " << expected
              << (count == expected ? " (exact: no increment lost)" : " (WRONG)") << "\n"
              << std::setprecision(0) << per_second << " acquisitions/s over " << std::setprecision(2)
              << elapsed << " s; " << handoffs.size() << " handoffs between processes, p50 "
              << std::setprecision(0) << percentile_us(handoffs, 0.50) << " us, p99 "
              << percentile_us(handoffs, 0.99) << " us\n";
  }
  if (failed_workers > 0) throw failure(exit_usage, std::to_string(failed_workers) + " worker(s) failed");
  return count == expected ? exit_ok : exit_conflict;
}

}  // namespace relock_cli
