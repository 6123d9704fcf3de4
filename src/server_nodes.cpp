// SPDX-License-Identifier: Apache-2.0
// client::nodes and client::call: the servers behind a client and one command to one of them,
// for tools and health checks. A master's command goes through the executor pinned to its node
// (exec::executor::run_at), a sentinel's through a probe of its own.
#include <relock/client.hpp>

#include <span>

#include "client_core.hpp"
#include "exec/probe.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace {

server_reply from_resp(resp::reply r) {
  server_reply out;
  out.type = static_cast<server_reply::kind>(r.type);
  out.text = std::move(r.str);
  out.integer = r.integer;
  out.elements.reserve(r.elements.size());
  for (auto& e : r.elements) out.elements.push_back(from_resp(std::move(e)));
  return out;
}

static_assert(static_cast<int>(resp::reply_type::array) ==
                  static_cast<int>(server_reply::kind::array),
              "server_reply::kind mirrors resp::reply_type");

std::vector<topology::node> masters_now(detail::client_core& core) {
  auto [masters] = detail::waiting::wait_for<std::vector<topology::node>>([&](auto done) {
    core.enter([&core, done = std::move(done)](bool running) mutable {
      if (!running) return done({});
      auto& e = core.executor();
      done(e.cluster() ? e.masters() : std::vector<topology::node>{e.master()});
    });
  });
  if (masters.empty()) throw error(errc::cancelled, "nodes: the client has been destroyed");
  return std::move(masters);
}

}  // namespace

std::vector<server_node> client::nodes() const {
  detail::waiting::refuse_io_thread(*core_, "nodes");
  std::vector<server_node> out;
  for (const auto& m : masters_now(*core_)) out.push_back({m.address(), node_role::master});
  for (const auto& s : core_->sentinels()) out.push_back({s.address(), node_role::sentinel});
  return out;
}

server_reply client::call(const server_node& node, std::vector<std::string> command) const {
  detail::waiting::refuse_io_thread(*core_, "call");
  if (command.empty()) throw error(errc::invalid_argument, "call: an empty command");
  const std::string what = "call " + command.front() + " on " + node.address;
  resp::request request;
  request.push(std::span<const std::string>(command));
  if (node.role == node_role::sentinel) {
    for (const auto& s : core_->sentinels()) {
      if (s.address() != node.address) continue;
      auto r = exec::probe(s, core_->sentinel_options(), std::move(request),
                           core_->settings().command_timeout);
      if (r.ec) throw error(r.ec, what + ": " + (r.detail.empty() ? r.ec.message() : r.detail));
      return from_resp(r.replies.empty() ? resp::reply{} : std::move(r.replies.front()));
    }
    throw error(errc::invalid_argument, what + ": not a sentinel of this client");
  }
  std::optional<topology::node> at;
  for (const auto& m : masters_now(*core_)) {
    if (m.address() == node.address) at = m;
  }
  if (!at) throw error(errc::invalid_argument, what + ": not a master of this client now");
  auto [ec, r] = detail::waiting::wait_for<std::error_code, resp::reply>([&](auto done) {
    core_->enter([core = core_.get(), at = *at, request = std::move(request),
                  done = detail::completion<void(std::error_code, resp::reply)>(std::move(done))](
                     bool running) mutable {
      if (!running) return done(errc::cancelled, resp::reply{});
      core->executor().run_at(at, std::move(request), core->guard(std::move(done)));
    });
  });
  // A server's error reply is the caller's to read; no reply at all throws.
  const bool no_reply = ec == errc::timeout || ec == errc::connection || ec == errc::auth_failed ||
                        ec == errc::cancelled || !r.is_error();
  if (ec && no_reply) throw error(ec, what + ": " + (r.str.empty() ? ec.message() : r.str));
  return from_resp(std::move(r));
}

}  // namespace relock
