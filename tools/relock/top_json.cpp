// SPDX-License-Identifier: Apache-2.0
#include "top_json.hpp"

#include <nlohmann/json.hpp>

#include "json_values.hpp"

namespace relock_cli {
namespace {

using nlohmann::json;

json holder_json(const top_holder& h) {
  // pid a string, as relock status --json has it.
  json out{{"owner", h.owner}, {"holds", h.holds}, {"side", h.side}};
  out["host"] = h.process ? or_null(h.process->host) : json(nullptr);
  out["pid"] = h.process ? or_null(h.process->pid) : json(nullptr);
  out["addr"] = h.process ? or_null(h.process->addr) : json(nullptr);
  return out;
}

json object_json(const top_object& o) {
  json holders = json::array();
  for (const auto& h : o.holders) holders.push_back(holder_json(h));
  return json{{"name", o.name},
              {"kind", o.kind},
              {"node", o.node},
              {"holders", o.lock_family() ? holders : json(nullptr)},
              {"remaining_lease_ms", or_null(o.remaining_lease_ms)},
              {"waiters", or_null(o.waiters)},
              {"subscribers", or_null(o.subscribers)},
              {"permits", or_null(o.permits)},
              {"permits_taken", or_null(o.permits_taken)},
              {"length", or_null(o.length)},
              {"delayed", or_null(o.delayed)}};
}

}  // namespace

std::string top_json(const std::vector<top_object>& objects, std::size_t limit) {
  json list = json::array();
  for (const auto& o : objects) {
    if (limit > 0 && list.size() == limit) break;
    list.push_back(object_json(o));
  }
  // Names are bytes and JSON is UTF-8: a byte that is not UTF-8 becomes U+FFFD (as output.cpp).
  return json{{"objects", list}, {"matched", objects.size()}}.dump(-1, ' ', false,
                                                                   json::error_handler_t::replace);
}

}  // namespace relock_cli
