// SPDX-License-Identifier: Apache-2.0
// Does a port speak plain RESP? A second connection sends an inline PING and looks at the first
// byte of the answer. For a TLS handshake that goes unanswered: a plain Redis reads a
// ClientHello as an inline command whose line never ends (it looks for '\n' with strchr, and a
// hello has a NUL in its sixth byte), so it says nothing until relock's connect timeout. A TLS
// server drops the probe (it is not TLS), so a probe can only confirm a plain server, never
// refute a TLS one.
// Thread-safety: the io_context's thread only. Lifetime: the probe keeps itself alive while it
// runs; cancel() (or the io_context's end) stops it, and its callback is then never called.
#pragma once

#include <functional>
#include <memory>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

namespace relock::net {

class plain_probe : public std::enable_shared_from_this<plain_probe> {
 public:
  // Calls `answered_resp` once if `where` answers the PING in RESP (+PONG, -NOAUTH, -DENIED...).
  static std::shared_ptr<plain_probe> start(asio::io_context& io, asio::ip::tcp::endpoint where,
                                            std::function<void()> answered_resp);
  void cancel();

 private:
  plain_probe(asio::io_context& io, std::function<void()> answered_resp);

  asio::ip::tcp::socket socket_;
  std::function<void()> answered_resp_;
  char first_ = 0;
};

}  // namespace relock::net
