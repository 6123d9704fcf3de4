// SPDX-License-Identifier: Apache-2.0
#include "support/fault_run.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/fenced_register.hpp"
#include "support/raw_client.hpp"

namespace relock::test {
namespace {

std::string join(const std::vector<std::string>& parts, char by) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(1, by)) + p;
  return out;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::int64_t ns_from_now(std::chrono::milliseconds d) {
  return monotonic_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

fault_run::fault_run(const std::string& label)
    : dir_("relock-faults-" + label),
      nemesis_((dir_.path() / "nemesis.jsonl").string(), "nemesis") {}

fault_run::~fault_run() {
  for (auto& w : workers_) w->process.kill();
  // For a look after the fact: RELOCK_FAULTS_KEEP=DIR keeps a copy of every run's histories.
  if (const char* keep = std::getenv("RELOCK_FAULTS_KEEP")) {
    std::error_code ec;
    const auto to = std::filesystem::path(keep) / dir().filename();
    std::filesystem::create_directories(to, ec);
    std::filesystem::copy(dir(), to, std::filesystem::copy_options::recursive, ec);
  }
}

std::size_t fault_run::start_worker(const worker_settings& s) {
  auto w = std::make_unique<worker>();
  w->name = "w" + std::to_string(workers_.size() + 1);
  std::vector<std::string> argv = {
      RELOCK_FAULT_WORKER,
      "url=" + s.url,
      "register=" + resource_.host() + ":" + std::to_string(resource_.port()),
      "names=" + join(s.names, ','),
      "process=" + w->name,
      "out=" + (dir() / (w->name + ".jsonl")).string(),
      "until_ns=" + std::to_string(s.until_ns),
      "threads=" + std::to_string(s.threads),
      "fenced_percent=" + std::to_string(s.fenced_percent),
      "watchdog_lease_ms=" + std::to_string(s.watchdog_lease_ms),
      "command_timeout_ms=" + std::to_string(s.command_timeout_ms),
      "wait_max_ms=" + std::to_string(s.wait_max_ms),
      "seed=" + std::to_string(workers_.size() + 1)};
  argv.insert(argv.end(), s.extra.begin(), s.extra.end());
  w->process.spawn(std::move(argv), dir() / (w->name + ".out"));
  workers_.push_back(std::move(w));
  return workers_.size() - 1;
}

void fault_run::kill_worker(std::size_t i) {
  // Logged before and after: the worker may still act until it is reaped, and a fault only
  // explains what it overlaps.
  fault("start", "kill", workers_[i]->name);
  workers_[i]->process.kill();
  fault("end", "kill", workers_[i]->name);
}

void fault_run::pause_worker(std::size_t i) {
  fault("start", "pause", workers_[i]->name);
  workers_[i]->process.pause();
}

void fault_run::resume_worker(std::size_t i) {
  workers_[i]->process.resume();
  fault("end", "pause", workers_[i]->name);
}

void fault_run::stop_workers() { std::ofstream(dir() / "stop") << "stop\n"; }

int fault_run::wait_workers(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int killed = 0;
  for (auto& w : workers_) {
    if (w->process.paused()) w->process.resume();
    while (w->process.running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (w->process.running()) {
      fault("start", "kill", w->name);
      w->process.kill();
      ++killed;
    }
  }
  return killed;
}

void fault_run::fault(std::string_view phase, std::string_view kind, std::string_view target,
                      const std::vector<std::string>& names) {
  std::string list = "[";
  for (const auto& n : names) list += (list.size() > 1 ? "," : "") + json_quote(n);
  list += "]";
  // The names go in raw: event only takes scalars.
  event e("fault", phase);
  e.str("fault", kind).str("target", target);
  nemesis_.append(0, e, ",\"names\":" + list);
}

verdict fault_run::check(const std::vector<std::string>& names, int wake_bound_ms) {
  fenced_register reg(raw_client::to(resource_));
  std::string json = "{\"names\":{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    json += (i ? "," : "") + json_quote(names[i]) + ":" + reg.dump_json(names[i]);
  }
  json += "}}\n";
  {
    std::ofstream out(dir() / "register.json");
    out << json;
  }
  const auto report = dir() / "checker.out";
  const auto result = dir() / "checker.json";
  const std::string command = std::string(RELOCK_PYTHON) + " " + RELOCK_FAULT_CHECKER + " '" +
                              dir().string() + "' --wake-bound-ms " +
                              std::to_string(wake_bound_ms) + " --json '" + result.string() +
                              "' > '" + report.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  verdict v;
  v.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  v.output = read_file(report);
  v.json = read_file(result);
  return v;
}

}  // namespace relock::test
