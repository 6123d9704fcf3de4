// SPDX-License-Identifier: Apache-2.0
#include "exec/sentinel_discovery.hpp"

#include <relock/errors.hpp>

#include "exec/executor.hpp"
#include "exec/probe.hpp"
#include "topology/sentinel_view.hpp"

namespace relock::exec {

std::string role_of(const resp::reply& r) {
  if (!r.is_array() || r.elements.empty()) return {};
  return r.elements.front().str;
}

sentinel_master discover_master(const std::vector<net::endpoint>& sentinels,
                                const std::string& master_name,
                                const net::connection_options& sentinel_options,
                                const net::connection_options& data,
                                std::chrono::milliseconds command_timeout) {
  std::string reasons;
  auto note = [&reasons](const std::string& text) {
    reasons += (reasons.empty() ? "" : "; ") + text;
  };
  std::size_t answered = 0;
  std::size_t unknown = 0;
  std::size_t refused = 0;  // answered NOPERM
  for (const auto& sentinel : sentinels) {
    resp::request asked;
    asked.push({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name});
    asked.push({"SENTINEL", "REPLICAS", master_name});
    auto said = probe(sentinel, sentinel_options, std::move(asked), command_timeout);
    if (said.ec == errc::auth_failed) {
      throw error(said.ec, "sentinel " + sentinel.address() +
                               " refused the sentinel credentials (config::sentinel_user, "
                               "sentinel_password): " +
                               said.detail);
    }
    if (said.ec || said.replies.size() != 2) {
      note(sentinel.address() + ": " + (said.ec ? said.detail : "no reply"));
      continue;
    }
    ++answered;
    // Both answers are needed: without the replica count, replica sync on auto would grant
    // locks without WAIT, saying nothing. A sentinel user whose ACL rules leave one out is
    // refused, naming the command (README, least privilege), unless another sentinel serves.
    bool denied = false;
    for (std::size_t i = 0; i < 2; ++i) {
      if (said.replies[i].is_error() && classify(said.replies[i]) == errc::no_permission) {
        note(sentinel.address() + ": SENTINEL " +
             (i == 0 ? "GET-MASTER-ADDR-BY-NAME" : "REPLICAS") + ": " + said.replies[i].str);
        denied = true;
      }
    }
    if (denied) {
      ++refused;
      continue;
    }
    std::string why;
    auto master = topology::sentinel_view::read_master(said.replies[0], &why);
    if (!master) {
      if (said.replies[0].is_nil()) ++unknown;
      note(sentinel.address() + ": " + why);
      continue;
    }
    // A sentinel that has not heard of a failover yet names the old master: ask the node.
    net::endpoint where = data.target;
    where.host = master->host;
    where.port = master->port;
    auto role = probe(where, data, resp::request{"ROLE"}, command_timeout);
    if (role.ec == errc::auth_failed) {
      throw error(role.ec, "the master " + master->address() +
                               " refused the URL's credentials: " + role.detail);
    }
    if (role.ec || role.replies.empty()) {
      note(sentinel.address() + " names " + master->address() +
           ", which does not answer: " + (role.ec ? role.detail : "no reply"));
      continue;
    }
    const std::string is = role_of(role.replies.front());
    if (is != "master") {
      note(sentinel.address() + " names " + master->address() + ", which says it is " +
           (is.empty() ? resp::to_string(role.replies.front()) : "a " + is));
      continue;
    }
    return {*master, topology::sentinel_view::count_replicas(said.replies[1]).value_or(0)};
  }
  if (refused > 0) {
    throw error(
        errc::no_permission,
        "the sentinel user (config::sentinel_user) lacks ACL rules relock needs: " + reasons);
  }
  if (answered > 0 && unknown == answered) {
    throw error(errc::invalid_argument,
                "no sentinel knows a master named '" + master_name + "': " + reasons);
  }
  if (answered == 0) throw error(errc::connection, "no sentinel answered: " + reasons);
  throw error(errc::connection, "no master named '" + master_name + "' confirmed: " + reasons);
}

}  // namespace relock::exec
