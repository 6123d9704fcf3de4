// SPDX-License-Identifier: Apache-2.0
#include "support/redis_server.hpp"

#include "support/free_port.hpp"
#include "support/raw_client.hpp"
#include "support/server_kind.hpp"

#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace relock::test {
namespace {

using namespace std::chrono_literals;

// Generous for a server that starts in milliseconds, so a loaded CI machine is not a failure.
constexpr auto server_ready_timeout = 10s;
// Binding a free port can still lose a race with another process; try a few ports.
constexpr int server_launch_attempts = 5;

std::string percent_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

redis_server::redis_server(redis_options options)
    : options_(std::move(options)), program_(server_program()), dir_("relock-redis") {
  for (int attempt = 1;; ++attempt) {
    port_ = free_loopback_port();
    if (!options_.tls_cert_file.empty()) {
      do {
        tls_port_ = free_loopback_port();
      } while (tls_port_ == port_);
    }
    if (launch() == launch_result::ready) return;
    if (attempt == server_launch_attempts) {
      throw std::runtime_error(
          "redis-server could not bind a free port in " + std::to_string(server_launch_attempts) +
          " attempts; last lines of " + process_.output().string() + ":\n" + log_tail());
    }
  }
}

redis_server::~redis_server() {
  // SIGKILL, not stop(): nothing is persisted, so a graceful shutdown saves nothing, and it
  // costs up to 1/hz (100 ms) per server because Redis acts on SIGTERM in its cron. kill()
  // works on a paused server too, and reaps it before the dir is removed.
  process_.kill();
}

namespace {
std::string credentials_of(const redis_options& o) {
  if (o.password.empty()) return {};
  return percent_encode(o.acl_user) + ":" + percent_encode(o.password) + "@";
}
}  // namespace

std::string redis_server::url() const {
  return "redis://" + credentials_of(options_) + host_ + ":" + std::to_string(port_);
}

std::string redis_server::tls_url(const std::string& host) const {
  return "rediss://" + credentials_of(options_) + host + ":" + std::to_string(tls_port_);
}

void redis_server::stop() { process_.stop(); }

void redis_server::kill() { process_.kill(); }

void redis_server::pause() { process_.pause(); }

void redis_server::resume() { process_.resume(); }

void redis_server::start() {
  if (process_.running()) {
    throw std::logic_error("redis_server::start: pid " + std::to_string(pid()) + " still runs");
  }
  // Same port by contract, so no new port on a lost race: wait briefly for it instead.
  for (int attempt = 1;; ++attempt) {
    if (launch() == launch_result::ready) return;
    if (attempt == server_launch_attempts) {
      throw std::runtime_error("redis-server could not bind its port " + std::to_string(port_) +
                               " again; last lines of " + process_.output().string() + ":\n" +
                               log_tail());
    }
    std::this_thread::sleep_for(100ms);
  }
}

redis_server::launch_result redis_server::launch() {
  const auto config = dir() / "redis.conf";
  const auto log = dir() / "redis.log";
  write_file(config, redis_config(options_, port_, dir(), log, tls_port_));
  // The log is also the child's stdout/stderr: config errors are printed before Redis opens it.
  process_.spawn({program_.string(), config.string()}, log);
  return process_.wait_started([this] { return answers_as_ours(); }, server_ready_timeout,
                               "redis-server on " + host_ + ":" + std::to_string(port_)) ==
                 server_process::start::ready
             ? launch_result::ready
             : launch_result::port_in_use;
}

bool redis_server::answers_as_ours() {
  // Checking the PID, not just PING, matters: if another test's server took the port first,
  // ours fails to bind and exits, but the other one would answer.
  try {
    raw_client probe(host_, port_, options_.password, options_.acl_user, 250ms);
    auto info = probe.command({"INFO", "server"});
    if (!info.is_string() ||
        info.str.find("process_id:" + std::to_string(pid()) + "\r\n") == std::string::npos) {
      return false;
    }
    // INFO is answered while the server still loads its data (an AOF on restart: Redis serves
    // clients between chunks of the load), but every write is refused with -LOADING until it
    // ends. Ready means loaded. (Whole line: "async_loading:0" ends the same way.)
    auto persistence = probe.command({"INFO", "persistence"});
    return persistence.is_string() &&
           persistence.str.find("\r\nloading:0\r\n") != std::string::npos;
  } catch (const std::runtime_error&) {
    return false;  // not listening yet
  }
}

}  // namespace relock::test
