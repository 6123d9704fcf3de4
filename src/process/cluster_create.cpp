// SPDX-License-Identifier: Apache-2.0
#include "process/cluster_create.hpp"

#include "process/child.hpp"

namespace relock::process {

cluster_created create_cluster(const cluster_create& request) {
  std::vector<std::string> argv{request.redis_cli.string(), "--cluster", "create"};
  argv.insert(argv.end(), request.nodes.begin(), request.nodes.end());
  argv.insert(argv.end(),
              {"--cluster-replicas", std::to_string(request.replicas_per_master), "--cluster-yes"});
  child cli;
  cli.spawn(argv, {.output = request.log});
  // Nothing to probe: done is when redis-cli exits.
  const auto done = cli.wait_ready([] { return false; }, request.timeout);
  if (done == child::readiness::exited) {
    if (cli.exited_successfully()) return {.ok = true};
    return {.problem = cli.describe_exit()};
  }
  cli.kill();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(request.timeout);
  return {.timed_out = true,
          .problem = "did not finish within " + std::to_string(seconds.count()) + " s"};
}

}  // namespace relock::process
