// SPDX-License-Identifier: Apache-2.0
#include "exec/blocking_pool.hpp"

#include <algorithm>

namespace relock::exec {

blocking_pool::blocking_pool(asio::io_context& io, net::connection_options options,
                             std::size_t keep_idle)
    : io_(io), options_(std::move(options)), keep_idle_(keep_idle) {
  options_.push_mode = false;
  options_.next_target = {};
}

std::shared_ptr<net::connection> blocking_pool::lease(const net::endpoint& to) {
  if (closed_) return nullptr;
  auto& idle = idle_[to.address()];
  if (!idle.empty()) {
    auto c = std::move(idle.back());
    idle.pop_back();
    return c;
  }
  auto o = options_;
  o.target = to;
  auto c = net::connection::create(io_, o);
  c->start();
  std::erase_if(made_, [](const auto& w) { return w.expired(); });
  made_.push_back(c);
  return c;
}

void blocking_pool::give_back(std::shared_ptr<net::connection> c) {
  if (!c) return;
  auto& idle = idle_[c->target().address()];
  if (closed_ || c->outstanding() > 0 || idle.size() >= keep_idle_) {
    c->close();
    return;
  }
  idle.push_back(std::move(c));
}

void blocking_pool::close() {
  closed_ = true;
  idle_.clear();
  for (auto& w : made_) {
    if (auto c = w.lock()) c->close();
  }
  made_.clear();
}

}  // namespace relock::exec
