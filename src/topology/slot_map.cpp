// SPDX-License-Identifier: Apache-2.0
#include "topology/slot_map.hpp"

#include <algorithm>
#include <bitset>
#include <memory>
#include <tuple>
#include <utility>

namespace relock::topology {
namespace {

using resp::reply;

// Both parsers stop at the first fault: this records it for the caller's log line.
std::nullopt_t fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return std::nullopt;
}

bool is_key_value(const reply& r) { return r.is_array() && r.elements.size() % 2 == 0; }

std::optional<std::uint16_t> port_of(const reply* r) {
  if (!r || !r->is_integer() || r->integer < 1 || r->integer > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(r->integer);
}

bool usable(std::string_view host) { return !host.empty() && host != "?"; }

// The host rule of slot_map.hpp: a usable endpoint; "?" (or no endpoint at all) falls back to
// the ip; an unknown endpoint (null or "") is the host we reached the cluster by.
std::string host_of(const reply* endpoint, const reply* ip, std::string_view answering_host) {
  const std::string_view preferred = resp::text_of(endpoint);
  if (usable(preferred)) return std::string(preferred);
  const bool unknown = endpoint && (endpoint->is_nil() || preferred.empty());
  if (!unknown && usable(resp::text_of(ip))) return std::string(resp::text_of(ip));
  return std::string(answering_host);
}

// Reads "start, end" into [first, last], both in 0..16383 and in order.
std::optional<std::pair<std::uint16_t, std::uint16_t>> range_of(const reply& start,
                                                                const reply& end) {
  if (!start.is_integer() || !end.is_integer()) return std::nullopt;
  if (start.integer < 0 || start.integer > end.integer || end.integer >= slot_count) {
    return std::nullopt;
  }
  return std::pair{static_cast<std::uint16_t>(start.integer),
                   static_cast<std::uint16_t>(end.integer)};
}

// A node of CLUSTER SLOTS: [host, port, id, metadata].
std::optional<node> slots_node(const reply& r, std::string_view answering_host) {
  if (!r.is_array() || r.elements.size() < 2) return std::nullopt;
  const reply& host = r.elements[0];
  if (!host.is_nil() && !host.is_string()) return std::nullopt;
  auto port = port_of(&r.elements[1]);
  if (!port) return std::nullopt;
  const reply* ip = nullptr;
  if (r.elements.size() > 3) {
    if (!is_key_value(r.elements[3])) return std::nullopt;
    ip = resp::value_of(r.elements[3], "ip");
  }
  return node{host_of(&host, ip, answering_host), *port};
}

// A node of CLUSTER SHARDS, a flat key/value array, at its port of `kind`; nullopt without one.
std::optional<node> shards_node(const reply& n, std::string_view answering_host, port_kind kind) {
  auto port = port_of(resp::value_of(n, kind == port_kind::tls ? "tls-port" : "port"));
  if (!port) return std::nullopt;
  return node{host_of(resp::value_of(n, "endpoint"), resp::value_of(n, "ip"), answering_host),
              *port};
}

// The nodes of one shard that serve: the first master the cluster has not declared failed (or
// nullptr) and the online replicas. nullopt when a node is not a key/value array with a role.
struct serving {
  const reply* master = nullptr;
  std::vector<const reply*> replicas;
};

std::optional<serving> serving_nodes(const reply& nodes) {
  serving out;
  for (const auto& n : nodes.elements) {
    const auto* role = is_key_value(n) ? resp::value_of(n, "role") : nullptr;
    if (!role || !role->is_string()) return std::nullopt;
    const auto* health_field = resp::value_of(n, "health");
    const auto health = health_field ? resp::text_of(health_field) : "online";
    if (role->str == "master" && !out.master && health != "fail") out.master = &n;
    if (role->str == "replica" && health == "online") out.replicas.push_back(&n);
  }
  return out;
}

}  // namespace

std::string node::address() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

slot_map::slot_map() { owner_.fill(no_shard); }

std::optional<slot_map> slot_map::from_shards(const resp::reply& reply,
                                              std::string_view answering_host, std::string* why) {
  auto plain = parse_shards(reply, answering_host, port_kind::plain, why);
  auto tls = parse_shards(reply, answering_host, port_kind::tls, nullptr);
  if (!plain) return tls;  // a TLS-only cluster, or nothing readable (`why` says what)
  if (tls) plain->tls_view_ = std::make_shared<const slot_map>(std::move(*tls));
  return plain;
}

std::optional<slot_map> slot_map::for_ports(port_kind kind, std::string* why) const {
  if (ports_ == kind) return *this;
  if (kind == port_kind::tls && tls_view_) return *tls_view_;
  return fail(why, kind == port_kind::tls
                       ? "no TLS port in the slot map: Redis names its nodes' tls-port only "
                         "with tls-cluster yes"
                       : "the cluster's nodes have no plain-text port (TLS only)");
}

std::optional<slot_map> slot_map::parse_shards(const resp::reply& reply,
                                               std::string_view answering_host, port_kind kind,
                                               std::string* why) {
  if (reply.is_error()) return fail(why, "CLUSTER SHARDS answered " + reply.str);
  if (!reply.is_array()) return fail(why, "CLUSTER SHARDS: not an array");
  slot_map map;
  map.ports_ = kind;
  const std::string lacking =
      kind == port_kind::tls ? "a tls-port" : "a plain-text port (TLS only?)";
  std::bitset<slot_count> claimed;
  for (std::size_t i = 0; i < reply.elements.size(); ++i) {
    const auto& s = reply.elements[i];
    const std::string where = "CLUSTER SHARDS: shard " + std::to_string(i);
    const auto* slots = is_key_value(s) ? resp::value_of(s, "slots") : nullptr;
    const auto* nodes = is_key_value(s) ? resp::value_of(s, "nodes") : nullptr;
    if (!slots || !is_key_value(*slots) || !nodes || !nodes->is_array()) {
      return fail(why, where + " lacks its slots or nodes");
    }
    auto serving = serving_nodes(*nodes);
    if (!serving) return fail(why, where + ": a node without a role");
    std::vector<std::pair<std::uint16_t, std::uint16_t>> ranges;
    for (std::size_t k = 0; k < slots->elements.size(); k += 2) {
      auto range = range_of(slots->elements[k], slots->elements[k + 1]);
      if (!range) return fail(why, where + ": a slot range out of 0..16383");
      for (auto slot = range->first; slot <= range->second; ++slot) {
        if (claimed.test(slot)) {
          return fail(why, where + ": slot " + std::to_string(slot) + " twice");
        }
        claimed.set(slot);
      }
      ranges.push_back(*range);
    }
    if (ranges.empty() || !serving->master) continue;  // serves nothing, or its slots are down
    auto master = shards_node(*serving->master, answering_host, kind);
    if (!master) return fail(why, where + ": a master without " + lacking);
    const auto index = map.shard_for(*master);
    for (const auto* r : serving->replicas) {
      auto replica = shards_node(*r, answering_host, kind);
      if (!replica) return fail(why, where + ": a replica without " + lacking);
      map.add_replica(index, std::move(*replica));
    }
    for (auto [first, last] : ranges) {
      std::fill(map.owner_.begin() + first, map.owner_.begin() + last + 1, index);
    }
  }
  return map;
}

std::optional<slot_map> slot_map::from_slots(const resp::reply& reply,
                                             std::string_view answering_host, std::string* why,
                                             port_kind asked_over) {
  if (reply.is_error()) return fail(why, "CLUSTER SLOTS answered " + reply.str);
  if (!reply.is_array()) return fail(why, "CLUSTER SLOTS: not an array");
  slot_map map;
  map.ports_ = asked_over;
  for (std::size_t i = 0; i < reply.elements.size(); ++i) {
    const auto& e = reply.elements[i];
    const std::string where = "CLUSTER SLOTS: entry " + std::to_string(i);
    if (!e.is_array() || e.elements.size() < 3) {
      return fail(why, where + " is not [start, end, master...]");
    }
    auto range = range_of(e.elements[0], e.elements[1]);
    if (!range) return fail(why, where + ": a slot range out of 0..16383");
    auto master = slots_node(e.elements[2], answering_host);
    if (!master) return fail(why, where + ": an unreadable master");
    for (auto slot = range->first; slot <= range->second; ++slot) {
      if (map.owner_[slot] != no_shard) {
        return fail(why, where + ": slot " + std::to_string(slot) + " twice");
      }
    }
    const auto index = map.shard_for(*master);
    for (std::size_t k = 3; k < e.elements.size(); ++k) {
      auto replica = slots_node(e.elements[k], answering_host);
      if (!replica) return fail(why, where + ": an unreadable replica");
      map.add_replica(index, std::move(*replica));
    }
    std::fill(map.owner_.begin() + range->first, map.owner_.begin() + range->second + 1, index);
  }
  return map;
}

const node* slot_map::master_of(std::uint16_t slot) const {
  const auto* s = shard_of(slot);
  return s ? &s->master : nullptr;
}

std::span<const node> slot_map::replicas_of(std::uint16_t slot) const {
  const auto* s = shard_of(slot);
  return s ? std::span<const node>(s->replicas) : std::span<const node>();
}

std::vector<node> slot_map::masters() const {
  std::vector<node> out;
  std::vector<bool> seen(shards_.size());
  for (auto index : owner_) {
    if (index == no_shard || seen[index]) continue;
    seen[index] = true;
    out.push_back(shards_[index].master);
  }
  return out;
}

bool slot_map::covers_all() const {
  return std::find(owner_.begin(), owner_.end(), no_shard) == owner_.end();
}

void slot_map::moved(std::uint16_t slot, node to) {
  if (slot >= slot_count) return;
  tls_view_.reset();  // it no longer describes this map
  const auto known =
      std::find_if(shards_.begin(), shards_.end(), [&](const shard& s) { return s.master == to; });
  if (known != shards_.end()) {
    owner_[slot] = static_cast<std::uint16_t>(known - shards_.begin());
    return;
  }
  // A new master: reuse the entry of a shard that has lost all its slots, so the table stays as
  // small as the set of masters however many redirections a long-lived map sees.
  owner_[slot] = no_shard;
  std::vector<bool> used(shards_.size());
  for (auto index : owner_) {
    if (index != no_shard) used[index] = true;
  }
  const auto index =
      static_cast<std::uint16_t>(std::find(used.begin(), used.end(), false) - used.begin());
  if (index == shards_.size()) shards_.emplace_back();
  shards_[index] = {std::move(to), {}};
  owner_[slot] = index;
}

bool operator==(const slot_map& a, const slot_map& b) {
  if (a.ports_ != b.ports_) return false;
  // Slots come in long runs of one shard: compare a pair of shards once per run.
  std::uint16_t last_a = slot_map::no_shard, last_b = slot_map::no_shard;
  for (std::size_t slot = 0; slot < slot_count; ++slot) {
    const auto ia = a.owner_[slot], ib = b.owner_[slot];
    if (slot > 0 && ia == last_a && ib == last_b) continue;
    last_a = ia;
    last_b = ib;
    if ((ia == slot_map::no_shard) != (ib == slot_map::no_shard)) return false;
    if (ia == slot_map::no_shard) continue;
    const auto &sa = a.shards_[ia], &sb = b.shards_[ib];
    if (sa.master != sb.master || sa.replicas != sb.replicas) return false;
  }
  return true;
}

const slot_map::shard* slot_map::shard_of(std::uint16_t slot) const {
  if (slot >= slot_count || owner_[slot] == no_shard) return nullptr;
  return &shards_[owner_[slot]];
}

std::uint16_t slot_map::shard_for(const node& master) {
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i].master == master) return static_cast<std::uint16_t>(i);
  }
  // The parsers add a shard only for a master that gets unclaimed slots, so there are never
  // more than 16384 and an index always fits below no_shard.
  shards_.push_back({master, {}});
  return static_cast<std::uint16_t>(shards_.size() - 1);
}

void slot_map::add_replica(std::uint16_t index, node replica) {
  // Sorted and unique, so two maps of one cluster compare equal whichever node listed them.
  auto& replicas = shards_[index].replicas;
  auto key = [](const node& n) { return std::tie(n.host, n.port); };
  auto at = std::lower_bound(replicas.begin(), replicas.end(), replica,
                             [&](const node& a, const node& b) { return key(a) < key(b); });
  if (at == replicas.end() || *at != replica) replicas.insert(at, std::move(replica));
}

}  // namespace relock::topology
