// SPDX-License-Identifier: Apache-2.0
#include "topology/sentinel_view.hpp"

#include <charconv>

namespace relock::topology {
namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto space = text.find(' ');
    if (space != 0) out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

std::optional<std::uint16_t> port_of(std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

const std::vector<std::string_view>& sentinel_view::channels() {
  static const std::vector<std::string_view> all{"+switch-master", "+sdown",  "-sdown",
                                                 "+slave",         "+reboot", "+convert-to-slave"};
  return all;
}

std::optional<node> sentinel_view::read_master(const resp::reply& r, std::string* why) {
  auto fail = [why](std::string text) -> std::optional<node> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (r.is_nil()) return fail("it knows no master by that name");
  if (r.is_error()) return fail(r.str);
  if (!r.is_array() || r.elements.size() != 2) return fail("unexpected reply " + to_string(r));
  auto port = port_of(r.elements[1].str);
  if (r.elements[0].str.empty() || !port) return fail("unexpected reply " + to_string(r));
  return node{r.elements[0].str, *port};
}

std::optional<int> sentinel_view::count_replicas(const resp::reply& r) {
  if (!r.is_array()) return std::nullopt;
  int healthy = 0;
  for (const auto& entry : r.elements) {
    if (!entry.is_array()) return std::nullopt;
    bool down = false;
    std::string_view flags = resp::text_of(resp::value_of(entry, "flags"));
    while (!flags.empty()) {
      const auto comma = flags.find(',');
      const auto flag = flags.substr(0, comma);
      down = down || flag == "s_down" || flag == "o_down" || flag == "disconnected";
      if (comma == std::string_view::npos) break;
      flags.remove_prefix(comma + 1);
    }
    // A node Sentinel lists as a replica but that still says it is a master (the old master
    // after a switchover, for the ~10 s before Sentinel converts it) acknowledges nothing.
    const auto role = resp::text_of(resp::value_of(entry, "role-reported"));
    if (!role.empty() && role != "slave") down = true;
    // Nor, yet, does an entry Sentinel has just made and not asked INFO (the old master right
    // after +switch-master): its role is Sentinel's default, "slave", and only its master-host,
    // "?" until an INFO names one, tells. Counted, it would make every write wait WAIT's whole
    // timeout and fail unacknowledged. A replica still syncing (link "err", master-host known)
    // is counted: WAIT holds a write until it has it, which is what carries it over a failover.
    if (resp::text_of(resp::value_of(entry, "master-host")) == "?") down = true;
    if (!down) ++healthy;
  }
  return healthy;
}

sentinel_view::news sentinel_view::heard(std::string_view channel, std::string_view payload) const {
  const auto w = words(payload);
  news n;
  if (channel == "+switch-master") {
    // <master-name> <old-ip> <old-port> <new-ip> <new-port>
    if (w.size() == 5 && w[0] == name_) {
      if (auto port = port_of(w[4])) n.new_master = node{std::string(w[3]), *port};
      n.ask = true;
    }
    return n;
  }
  // <type> <name> <ip> <port> [@ <master-name> <master-ip> <master-port>]: an instance of ours
  // is the master itself, or a replica of it.
  if (w.size() >= 4 && w[0] == "master") {
    n.ask = w[1] == name_;
  } else if (w.size() >= 6 && w[4] == "@") {
    n.ask = w[5] == name_;
  }
  return n;
}

}  // namespace relock::topology
