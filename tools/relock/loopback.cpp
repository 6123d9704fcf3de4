// SPDX-License-Identifier: Apache-2.0
// Loopback ports and questions: see loopback.hpp.
#include "loopback.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <charconv>

#include "cli.hpp"

namespace relock_cli::loopback {
namespace {

sockaddr_in address(unsigned port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

struct socket_fd {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ~socket_fd() {
    if (fd >= 0) close(fd);
  }
};

// The port bound (0: the kernel picks one), or 0 when it is taken. Never listened on, so
// closing it leaves no TIME_WAIT behind.
unsigned bind_port(unsigned port) {
  socket_fd s;
  sockaddr_in addr = address(port);
  socklen_t len = sizeof addr;
  if (s.fd < 0 || bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

// A whole reply: a line, or a bulk string's header and body.
bool complete(const std::string& reply) {
  const auto line_end = reply.find("\r\n");
  if (line_end == std::string::npos) return false;
  if (reply.front() != '$') return true;
  long long length = 0;
  const auto [end, ec] = std::from_chars(reply.data() + 1, reply.data() + line_end, length);
  if (ec != std::errc() || length < 0) return true;  // a nil, or nothing we read further
  return reply.size() >= line_end + 2 + static_cast<std::size_t>(length) + 2;
}

}  // namespace

std::uint16_t free_port(const std::set<unsigned>& taken, bool with_bus) {
  // Ephemeral ports start at 32768, so about half of them have a bus port below 65536.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const unsigned port = bind_port(0);
    if (port == 0 || taken.contains(port)) continue;
    if (!with_bus) return static_cast<std::uint16_t>(port);
    const unsigned bus = port + bus_offset;
    if (bus <= 65535 && !taken.contains(bus) && bind_port(bus) == bus) {
      return static_cast<std::uint16_t>(port);
    }
  }
  throw failure(exit_usage, with_bus ? "demo: no free loopback port with a free cluster bus "
                                       "port (port + 10000) for a private Redis"
                                     : "demo: no free loopback port for a private Redis");
}

std::string ask(std::uint16_t port, const std::string& command, std::chrono::milliseconds timeout) {
  socket_fd s;
  if (s.fd < 0) return {};
  // Each connect, send and recv waits at most `timeout`.
  const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                      static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  const sockaddr_in addr = address(port);
  if (connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return {};
  const std::string line = command + "\r\n";
  if (send(s.fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    return {};
  }
  std::string reply;
  char buffer[4096];
  while (!complete(reply)) {
    const ssize_t n = recv(s.fd, buffer, sizeof buffer, 0);
    if (n <= 0) return {};
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  return reply;
}

}  // namespace relock_cli::loopback
