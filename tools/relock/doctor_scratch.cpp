// SPDX-License-Identifier: Apache-2.0
// relock doctor's scratch names: random ones per master, which land on that master. In a
// Cluster their slot must be one the master serves: the server says a key's slot (CLUSTER
// KEYSLOT), and which master serves which slots (CLUSTER SLOTS).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string_view>

#include "doctor.hpp"

namespace relock_cli::doctor {
namespace {

// Random tags tried for a master before giving up: with n masters each try hits with 1/n, and
// each costs a round trip.
constexpr int tries = 200;

// The slot of `key`, as `at` computes it; -1 when it does not answer.
std::int64_t keyslot(const relock::client& client, const relock::server_node& at,
                     const std::string& key) {
  try {
    const auto r = client.call(at, {"CLUSTER", "KEYSLOT", key});
    return r.type == relock::server_reply::kind::integer ? r.integer : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

std::string random_tag(std::mt19937_64& random) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string tag;
  auto bits = random();
  for (int i = 0; i < 12; ++i, bits >>= 4) tag += hex[bits & 0xf];
  return tag;
}

struct slot_range {
  std::int64_t first = 0, last = 0;
  std::string master;  // host:port
};

// CLUSTER SLOTS from the first master that answers it: [first, last, [host, port, id], ...].
std::vector<slot_range> slot_ranges(const relock::client& client,
                                    const std::vector<relock::server_node>& masters) {
  for (const auto& m : masters) {
    relock::server_reply r;
    try {
      r = client.call(m, {"CLUSTER", "SLOTS"});
    } catch (const std::exception&) {
      continue;
    }
    if (r.is_error()) continue;
    std::vector<slot_range> out;
    for (const auto& e : r.elements) {
      if (e.elements.size() < 3 || e.elements[2].elements.size() < 2) continue;
      const auto& at = e.elements[2].elements;
      out.push_back({e.elements[0].integer, e.elements[1].integer,
                     at[0].text + ":" + std::to_string(at[1].integer)});
    }
    return out;
  }
  return {};
}

}  // namespace

std::map<std::string, scratch_names> scratch_for(const relock::client& client,
                                                 const std::vector<relock::server_node>& masters,
                                                 bool cluster) {
  std::mt19937_64 random(std::random_device{}());
  std::map<std::string, scratch_names> out;
  if (!cluster) {
    for (const auto& m : masters) {
      out[m.address] = {random_tag(random), "relock-doctor:" + random_tag(random)};
    }
    return out;
  }
  const auto ranges = slot_ranges(client, masters);
  // A random text whose slot (that of the key `hashed(text)`) this master serves; empty if none.
  const auto on = [&](const relock::server_node& m, auto hashed) -> std::string {
    for (int i = 0; i < tries; ++i) {
      const auto text = random_tag(random);
      const auto slot = keyslot(client, m, hashed(text));
      if (slot < 0) return {};
      for (const auto& range : ranges) {
        if (range.master == m.address && slot >= range.first && slot <= range.last) return text;
      }
    }
    return {};
  };
  for (const auto& m : masters) {
    const bool serves = std::any_of(ranges.begin(), ranges.end(),
                                    [&](const slot_range& r) { return r.master == m.address; });
    if (!serves) continue;
    scratch_names names;
    names.tag = on(m, [](const std::string& tag) { return tag; });
    names.latch =
        "relock-doctor:" + on(m, [](const std::string& hex) { return "relock-doctor:" + hex; });
    if (!names.tag.empty() && names.latch != "relock-doctor:") out[m.address] = names;
  }
  return out;
}

}  // namespace relock_cli::doctor
