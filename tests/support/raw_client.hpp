// SPDX-License-Identifier: Apache-2.0
// A blocking hiredis client that plays "another client" in tests: it shares no code with the
// library under test, so what it sees is what the server holds.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "resp/reply.hpp"

struct redisContext;

namespace relock::test {

class redis_server;

// Thread-safety: none; use one per thread. Move-only.
// Connection: opened by the constructor, which authenticates (AUTH password, or AUTH user
// password) and throws std::runtime_error when it cannot connect or AUTH is refused. After an
// I/O error or a timeout the connection is dropped and the next command() reconnects and
// authenticates again; per-connection state (SELECT, CLIENT SETNAME, subscriptions) is not
// restored.
class raw_client {
 public:
  // `timeout` bounds the connect and each command's write and read, so a test never hangs on a
  // stopped server: 10 s by default, far above any healthy reply on loopback.
  raw_client(std::string host, std::uint16_t port, std::string password = {}, std::string user = {},
             std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~raw_client();
  raw_client(raw_client&&) noexcept;
  raw_client& operator=(raw_client&&) noexcept;
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  // A client of `server` with its password and ACL user.
  static raw_client to(const redis_server& server);

  // Sends one command and returns the server's reply; an error reply (NOAUTH, WRONGTYPE...) is
  // returned as a reply of type error. Throws std::runtime_error on an I/O error or timeout.
  resp::reply command(std::vector<std::string> args);

  // Changes the timeout of later commands and of reconnects.
  void set_timeout(std::chrono::milliseconds timeout);

  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }

 private:
  struct context_deleter {
    void operator()(redisContext* c) const;
  };

  void connect();
  std::string where() const;

  std::string host_;
  std::uint16_t port_;
  std::string password_;
  std::string user_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<redisContext, context_deleter> context_;
};

}  // namespace relock::test
