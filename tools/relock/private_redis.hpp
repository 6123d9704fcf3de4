// SPDX-License-Identifier: Apache-2.0
// A throwaway Redis for `relock demo` when none is given or answering: one redis-server, or a
// Redis Cluster of three masters that redis-cli joins, on free loopback ports in a temp dir;
// redis-server and redis-cli are taken from PATH. The servers die with us (the parent-death
// signal of src/process) and are stopped by PID, and the dir removed, when this object goes.
// Make it on the thread that outlives it (the servers die with the thread that started them):
// the main thread.
// With TLS, one server that speaks TLS only (port 0, a tls-port), its certificate signed by a
// throwaway CA made in its dir (throwaway_ca.hpp): url() is rediss://, ca_file() that CA.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "demo_dir.hpp"
#include "process/child.hpp"
#include "throwaway_ca.hpp"

namespace relock_cli {

class private_redis {
 public:
  enum class shape { server, cluster, tls_server };

  // Returns once the server answers, or once every node of the cluster says cluster_state:ok.
  // Throws failure (exit_usage) when it does not come up, naming the log that says why.
  explicit private_redis(shape s);
  const std::string& url() const { return url_; }
  // The CA to trust for a tls_server; empty otherwise.
  const std::string& ca_file() const { return tls_.ca_cert; }

 private:
  std::uint16_t start_server(const std::string& dir, std::set<unsigned>& taken);
  std::vector<std::string> server_args(const std::filesystem::path& program, std::uint16_t port,
                                       const std::string& dir, const std::string& log) const;
  // `name` on PATH; else fails with `missing`, the message that says what to do instead.
  std::filesystem::path program(const std::string& name, const std::string& missing);
  // Runs `start`, which starts `name`, turning process::spawn's failures into the demo's:
  // `missing` when exec failed.
  void starting(const std::string& name, const std::string& missing,
                const std::function<void()>& start);
  // Whether the server `pid` answers on `port`: its PID in INFO, or for TLS a handshake that
  // our CA's certificate passes. Either way a process that took the port first is not taken for
  // ours: it cannot have our PID, nor a certificate from a CA made a moment ago.
  bool ours_answers(std::uint16_t port, pid_t pid) const;
  void create_cluster(const std::vector<std::uint16_t>& ports);
  [[noreturn]] void fail(const std::string& what, const std::string& log);

  shape shape_;
  // The servers started and their dir. A failure that names a log keeps the dir.
  demo_dir dir_;
  // Declared after dir_, so they go first, also when the constructor throws half way: each is
  // SIGKILLed (nothing to save: a demo's data) and reaped before the dir is removed.
  std::deque<relock::process::child> servers_;
  throwaway_tls tls_;  // tls_server only
  std::string url_;
};

}  // namespace relock_cli
