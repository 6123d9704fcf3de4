// SPDX-License-Identifier: Apache-2.0
#include "top_refresh.hpp"

#include <map>

#include "client_directory.hpp"
#include "top_inspect.hpp"
#include "top_scan.hpp"
#include "top_subscribers.hpp"

namespace relock_cli {
namespace {

std::vector<relock::server_node> masters_of(const relock::client& client) {
  std::vector<relock::server_node> masters;
  for (auto& node : client.nodes()) {
    if (node.role == relock::node_role::master) masters.push_back(std::move(node));
  }
  return masters;
}

// Sent again at every refresh: a connection that dropped and came back has forgotten it.
bool no_touch(const relock::client& client, const std::vector<relock::server_node>& masters) {
  bool everywhere = true;
  for (const auto& node : masters) {
    if (client.call(node, {"CLIENT", "NO-TOUCH", "on"}).is_error()) everywhere = false;
  }
  return everywhere;
}

// Each holder's process, from CLIENT LIST on the node that serves its lock: read once per node.
void find_processes(const relock::client& client, std::vector<top_object>& objects) {
  std::map<std::string, client_directory> directories;
  for (auto& o : objects) {
    if (o.holders.empty()) continue;
    auto at = directories.find(o.node);
    if (at == directories.end()) {
      at = directories
               .emplace(o.node, client_directory::read(client, {o.node, relock::node_role::master}))
               .first;
    }
    for (auto& h : o.holders) h.process = at->second.find(h.owner);
  }
}

}  // namespace

top_snapshot refresh(const relock::client& client, const std::string& pattern) {
  top_snapshot s;
  const auto masters = masters_of(client);
  s.no_touch_unavailable = !no_touch(client, masters);
  s.objects = read_objects(client, find_objects(client, masters, pattern), s.refused);
  find_processes(client, s.objects);
  count_subscribers(client, masters, s.objects);
  return s;
}

}  // namespace relock_cli
