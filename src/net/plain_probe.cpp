// SPDX-License-Identifier: Apache-2.0
#include "net/plain_probe.hpp"

#include <fcntl.h>

#include <asio/buffer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <utility>

namespace relock::net {

plain_probe::plain_probe(asio::io_context& io, std::function<void()> answered_resp)
    : socket_(io), answered_resp_(std::move(answered_resp)) {}

std::shared_ptr<plain_probe> plain_probe::start(asio::io_context& io, asio::ip::tcp::endpoint where,
                                                std::function<void()> answered_resp) {
  std::shared_ptr<plain_probe> probe(new plain_probe(io, std::move(answered_resp)));
  std::error_code ec;
  probe->socket_.open(where.protocol(), ec);
  if (ec) return probe;
  // As connection's own sockets: never handed to a program this one runs.
  ::fcntl(probe->socket_.native_handle(), F_SETFD, FD_CLOEXEC);
  probe->socket_.async_connect(where, [probe](std::error_code ec) {
    if (ec || !probe->answered_resp_) return;
    static constexpr char ping[] = "PING\r\n";
    asio::async_write(probe->socket_, asio::buffer(ping, sizeof ping - 1),
                      [probe](std::error_code ec, std::size_t) {
                        if (ec || !probe->answered_resp_) return;
                        asio::async_read(probe->socket_, asio::buffer(&probe->first_, 1),
                                         [probe](std::error_code ec, std::size_t) {
                                           const char c = probe->first_;
                                           const bool resp = c == '+' || c == '-' || c == ':' ||
                                                             c == '$' || c == '*';
                                           auto answered = std::exchange(probe->answered_resp_, {});
                                           probe->cancel();
                                           if (!ec && resp && answered) answered();
                                         });
                      });
  });
  return probe;
}

void plain_probe::cancel() {
  answered_resp_ = nullptr;
  std::error_code ignored;
  socket_.close(ignored);
}

}  // namespace relock::net
