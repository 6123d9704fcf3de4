// SPDX-License-Identifier: Apache-2.0
#include "client_directory.hpp"

namespace relock_cli {
namespace {

// The value of `field=` in one CLIENT LIST line; empty when absent. Values hold no spaces
// (Redis refuses a name with one), so a field ends at the next space.
std::string_view field_of(std::string_view line, std::string_view field) {
  for (std::size_t at = 0; at < line.size();) {
    const auto end = std::min(line.find(' ', at), line.size());
    const auto word = line.substr(at, end - at);
    if (word.size() > field.size() && word.substr(0, field.size()) == field &&
        word[field.size()] == '=') {
      return word.substr(field.size() + 1);
    }
    at = end + 1;
  }
  return {};
}

// The client id in an owner field: what comes before its last ':' ("{id}:{thread}").
std::string_view id_of(std::string_view owner) {
  const auto colon = owner.rfind(':');
  return colon == std::string_view::npos ? owner : owner.substr(0, colon);
}

}  // namespace

client_directory client_directory::read(const relock::client& client,
                                        const relock::server_node& node) {
  try {
    const auto reply = client.call(node, {"CLIENT", "LIST"});
    if (reply.is_error()) {
      client_directory d;
      d.why_not_ = "CLIENT LIST refused: " + reply.text;
      return d;
    }
    return parse(reply.text);
  } catch (const relock::error& e) {
    client_directory d;
    d.why_not_ = std::string("CLIENT LIST failed: ") + e.what();
    return d;
  }
}

client_directory client_directory::parse(std::string_view client_list) {
  client_directory d;
  for (std::size_t at = 0; at < client_list.size();) {
    const auto end = std::min(client_list.find('\n', at), client_list.size());
    const auto line = client_list.substr(at, end - at);
    const auto name = field_of(line, "name");
    if (!name.empty())
      d.clients_.push_back({std::string(name), std::string(field_of(line, "addr"))});
    at = end + 1;
  }
  return d;
}

std::optional<holder_process> client_directory::find(std::string_view owner) const {
  const auto id = id_of(owner);
  if (id.empty()) return std::nullopt;
  for (const auto& c : clients_) {
    if (c.name.find(id) == std::string::npos) continue;
    holder_process p;
    p.addr = c.addr;
    // The default form, relock:{id}:{host}:{pid}: host and pid follow the id.
    const std::string prefix = "relock:" + std::string(id) + ":";
    if (c.name.rfind(prefix, 0) == 0) {
      const std::string_view rest = std::string_view(c.name).substr(prefix.size());
      const auto colon = rest.rfind(':');
      if (colon != std::string_view::npos) {
        p.host = std::string(rest.substr(0, colon));
        p.pid = std::string(rest.substr(colon + 1));
      }
    }
    return p;
  }
  return std::nullopt;
}

std::string shown(const std::optional<holder_process>& p) {
  if (!p) return "unknown";
  std::string out;
  if (!p->host.empty()) out = p->host + " pid " + p->pid;
  if (!p->addr.empty()) out += (out.empty() ? "" : " ") + ("(" + p->addr + ")");
  return out.empty() ? "unknown" : out;
}

}  // namespace relock_cli
