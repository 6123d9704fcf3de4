// SPDX-License-Identifier: Apache-2.0
// A real redis-server owned by one test: free loopback port, fresh temp dir, generated config,
// ready (answers PING) when the constructor returns, gone when the destructor returns.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "support/redis_config.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace relock::test {

// Thread-safety: none; drive it from the test's thread (other threads may of course talk to the
// server over the network). Create it on a thread that outlives it: see server_process.
// Failure: the constructor and start() throw std::runtime_error with the end of the server's
// log when the server does not come up within 10 s.
//   redis_server server({.password = "pw", .acl_user = "app"});
//   config.url = server.url();  // redis://app:pw@127.0.0.1:PORT
class redis_server {
 public:
  explicit redis_server(redis_options options = {});
  // SIGKILLs the server (paused or not; there is nothing to save), reaps it, removes the dir.
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }
  // redis://[user:password@ or :password@]127.0.0.1:PORT, credentials percent-encoded.
  std::string url() const;
  // With TLS (redis_options::tls_cert_file): its port, and rediss://...@HOST:TLS_PORT.
  std::uint16_t tls_port() const { return tls_port_; }
  std::string tls_url(const std::string& host = "127.0.0.1") const;
  // The current (or last) server process; changes when start() runs it again.
  pid_t pid() const { return process_.pid(); }
  const std::filesystem::path& dir() const { return dir_.path(); }
  const redis_options& options() const { return options_; }
  bool running() { return process_.running(); }

  // Graceful shutdown (SIGTERM, SIGKILL after 5 s); idempotent. Data is not saved.
  void stop();
  // SIGKILL, as a crash would; idempotent.
  void kill();
  // Runs the server again on the same port and dir after stop() or kill(); it starts empty.
  // Throws std::logic_error if it still runs.
  void start();
  // SIGSTOP / SIGCONT: the server keeps its sockets and accepts TCP connections (the kernel
  // does), but answers nothing until resumed, like a server stuck in a long pause.
  void pause();
  void resume();

  std::string log_tail(std::size_t lines = 40) const { return process_.output_tail(lines); }

 private:
  enum class launch_result { ready, port_in_use };
  launch_result launch();
  bool answers_as_ours();

  redis_options options_;
  std::string host_ = "127.0.0.1";
  std::uint16_t port_ = 0;
  std::uint16_t tls_port_ = 0;
  std::filesystem::path program_;
  temp_dir dir_;  // declared before process_: the process dies before its dir goes
  server_process process_;
};

}  // namespace relock::test
