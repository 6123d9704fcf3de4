// SPDX-License-Identifier: Apache-2.0
// relock doctor: is this deployment safe for locks? Every node the client knows (the master,
// each Cluster master, Sentinel's master and its sentinels) is checked, each check a finding
// pass, warn or fail with why and the fix; the exit status is the worst finding's.
#include "cli.hpp"
#include "doctor.hpp"

namespace relock_cli {
namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// Where the host list starts: after the scheme and any credentials (a password may hold '/').
std::size_t authority_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  const auto from = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const auto at = url.rfind('@');
  return at != std::string::npos && at >= from ? at + 1 : from;
}

// The URL's ACL user: redis://USER:PW@...; none, or a lone password: "default".
std::string user_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  const auto from = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const auto at = url.rfind('@');
  if (at == std::string::npos || at < from) return "default";
  const auto colon = url.find(':', from);
  if (colon >= at || colon == from) return "default";
  return url.substr(from, colon - from);
}

// redis-sentinel://host:port,.../MASTER?options -> MASTER.
std::string sentinel_master_of(const std::string& url) {
  const auto slash = url.find('/', authority_of(url));
  if (slash == std::string::npos) return {};
  const auto end = url.find('?', slash);
  return url.substr(slash + 1, end == std::string::npos ? std::string::npos : end - slash - 1);
}

// help::doctor_exit_codes: a warning is 1, a failure 3 (as a lock lost is for run).
constexpr int exit_warned = 1;
constexpr int exit_failed = 3;

int exit_code_of(doctor::status worst) {
  switch (worst) {
    case doctor::status::pass:
      return exit_ok;
    case doctor::status::warn:
      return exit_warned;
    case doctor::status::fail:
      return exit_failed;
  }
  return exit_usage;
}

}  // namespace

int doctor_command(const global_options& g, const doctor_options& o) {
  auto settings = make_config(g);  // checks --watchdog-timeout: its lease is the default here
  doctor::run_context run;
  run.lease =
      o.lease_seconds ? to_duration(*o.lease_seconds, "--lease", true) : settings.watchdog_lease;
  run.user = user_of(g.url);
  run.cluster = starts_with(g.url, "redis-cluster://") || starts_with(g.url, "rediss-cluster://");
  if (starts_with(g.url, "redis-sentinel://") || starts_with(g.url, "rediss-sentinel://")) {
    run.sentinel_master = sentinel_master_of(g.url);
  }
  settings.connect_timeout = one_shot_timeout;  // a check: no reason to wait 10 s
  // The second client holds the lock the first waits for (the acl check's pub/sub).
  auto holder = connect(g, settings);
  auto watch = std::make_shared<doctor::refusal_watch>();
  settings.observer = watch;
  auto client = connect(g, std::move(settings));

  std::vector<relock::server_node> masters, sentinels;
  for (const auto& n : client.nodes()) {
    (n.role == relock::node_role::sentinel ? sentinels : masters).push_back(n);
  }
  const auto scratch = doctor::scratch_for(client, masters, run.cluster);
  std::vector<doctor::finding> findings;
  for (const auto& m : masters) {
    const auto names = scratch.find(m.address);
    auto found = doctor::examine_master(
        client, holder, *watch, m, names == scratch.end() ? doctor::scratch_names{} : names->second,
        run);
    findings.insert(findings.end(), found.begin(), found.end());
  }
  for (const auto& s : sentinels) {
    auto found = doctor::examine_sentinel(client, s, run);
    findings.insert(findings.end(), found.begin(), found.end());
  }
  doctor::print_report(findings, g.json);
  return exit_code_of(doctor::worst(findings));
}

}  // namespace relock_cli
