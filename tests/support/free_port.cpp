// SPDX-License-Identifier: Apache-2.0
#include "support/free_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace relock::test {

namespace {

// A socket bound to a port of the kernel's choosing on 127.0.0.1, never listened on.
int bound_socket(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "picking a free loopback port");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

std::uint16_t free_loopback_port() {
  std::uint16_t port = 0;
  // Never listened on nor connected, so closing leaves no TIME_WAIT entry behind.
  ::close(bound_socket(port));
  return port;
}

closed_port::closed_port() { fd_ = bound_socket(port_); }

closed_port::~closed_port() { ::close(fd_); }

}  // namespace relock::test
