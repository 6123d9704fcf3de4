// SPDX-License-Identifier: Apache-2.0
#include "support/cluster_topology.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace relock::test {
namespace {

cluster_node known_node(const redis_cluster& cluster, const resp::reply& entry) {
  // [ip, port, id, ...]
  if (!entry.is_array() || entry.elements.size() < 2 || !entry.elements[1].is_integer()) {
    throw std::runtime_error("CLUSTER SLOTS: unexpected node entry " + to_string(entry));
  }
  const auto port = static_cast<std::uint16_t>(entry.elements[1].integer);
  try {
    return cluster.node(port);
  } catch (const std::invalid_argument&) {
    return {.host = entry.elements[0].str, .port = port, .pid = -1, .dir = {}};  // not ours
  }
}

}  // namespace

std::string info_field(std::string_view text, std::string_view key) {
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    auto line = text.substr(at, end == std::string_view::npos ? end : end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') {
      return std::string(line.substr(key.size() + 1));
    }
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return {};
}

bool nodes_line::has_flag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::vector<nodes_line> parse_cluster_nodes(std::string_view text) {
  std::vector<nodes_line> lines;
  std::istringstream in{std::string(text)};
  for (std::string row; std::getline(in, row);) {
    std::istringstream fields(row);
    nodes_line l;
    std::string address, flags, ping, pong, epoch;
    if (!(fields >> l.id >> address >> flags >> l.master_id >> ping >> pong >> epoch >> l.link)) {
      continue;
    }
    l.address = address.substr(0, address.find('@'));
    std::istringstream flag_list(flags);
    for (std::string f; std::getline(flag_list, f, ',');) l.flags.push_back(f);
    for (std::string s; fields >> s;) l.slots.push_back(s);
    lines.push_back(std::move(l));
  }
  return lines;
}

std::vector<slot_range> slot_map_of(const redis_cluster& cluster, const cluster_node& node) {
  auto reply = cluster.client(node, probe_timeout).command({"CLUSTER", "SLOTS"});
  if (!reply.is_array()) {
    throw std::runtime_error(node.address() + ": CLUSTER SLOTS: " + to_string(reply));
  }
  std::vector<slot_range> map;
  for (const auto& entry : reply.elements) {
    // [first, last, master, replica...]
    if (!entry.is_array() || entry.elements.size() < 3) {
      throw std::runtime_error(node.address() + ": CLUSTER SLOTS: " + to_string(entry));
    }
    slot_range r;
    r.first = static_cast<std::uint16_t>(entry.elements[0].integer);
    r.last = static_cast<std::uint16_t>(entry.elements[1].integer);
    r.master = known_node(cluster, entry.elements[2]);
    for (std::size_t i = 3; i < entry.elements.size(); ++i) {
      r.replicas.push_back(known_node(cluster, entry.elements[i]));
    }
    std::sort(r.replicas.begin(), r.replicas.end(),
              [](const auto& a, const auto& b) { return a.port < b.port; });
    map.push_back(std::move(r));
  }
  std::sort(map.begin(), map.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return map;
}

std::string describe(const std::vector<slot_range>& map) {
  std::string text;
  for (const auto& r : map) {
    if (!text.empty()) text += "; ";
    text +=
        std::to_string(r.first) + "-" + std::to_string(r.last) + " " + r.master.address() + " [";
    for (const auto& replica : r.replicas) {
      if (&replica != &r.replicas.front()) text += ' ';
      text += replica.address();
    }
    text += ']';
  }
  return text;
}

}  // namespace relock::test
