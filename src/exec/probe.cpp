// SPDX-License-Identifier: Apache-2.0
#include "exec/probe.hpp"

#include <iterator>

#include <asio/io_context.hpp>
#include <relock/errors.hpp>

namespace relock::exec {

probe_result probe(const net::endpoint& where, net::connection_options options,
                   resp::request request, std::chrono::milliseconds timeout) {
  options.observer = nullptr;  // its loop is not the client's: the observer hears only that one
  asio::io_context io;
  options.target = where;
  options.push_mode = false;
  options.next_target = {};
  auto c = net::connection::create(io, options);
  probe_result result;
  c->start([&](std::error_code ec, std::string why) {
    if (ec) {
      result.ec = ec;
      result.detail = std::move(why);
      c->close();  // it would go on reconnecting
      return;
    }
    c->send(std::move(request), net::clock::now() + timeout,
            [&](std::error_code ec, net::reply_span replies) {
              result.ec = ec;
              if (ec) result.detail = replies.empty() ? ec.message() : replies.back().str;
              result.replies.assign(std::make_move_iterator(replies.begin()),
                                    std::make_move_iterator(replies.end()));
              c->close();
            });
  });
  io.run();
  return result;
}

}  // namespace relock::exec
