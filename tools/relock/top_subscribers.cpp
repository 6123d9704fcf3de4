// SPDX-License-Identifier: Apache-2.0
#include "top_subscribers.hpp"

#include <map>
#include <string>

#include "top_names.hpp"

namespace relock_cli {
namespace {

// Channels per PUBSUB command: a few kilobytes of names, far below any limit.
constexpr std::size_t per_command = 256;

// The channels an object's waiters listen on (data-layout §1.2): none for a queue.
std::vector<std::string> channels_of(const top_object& o) {
  if (o.kind == "read-write") return {prefixed("redisson_rwlock", o.name)};
  if (o.lock_family()) return {prefixed("redisson_lock__channel", o.name)};
  if (o.kind == "permit-semaphore") return {prefixed("redisson_sc", o.name)};
  // A semaphore's or a latch's: the data cannot tell which it is, and only one is listened on.
  if (o.kind == "counter") {
    return {prefixed("redisson_sc", o.name), "redisson_countdownlatch__channel__{" + o.name + "}"};
  }
  return {};
}

// Adds `verb`'s counts of `channels` on `node` to `counts`; false when the node refuses it.
bool add_counts(const relock::client& client, const relock::server_node& node, const char* verb,
                const std::vector<std::string>& channels,
                std::map<std::string, std::int64_t>& counts) {
  for (std::size_t from = 0; from < channels.size(); from += per_command) {
    std::vector<std::string> command{"PUBSUB", verb};
    const auto to = std::min(channels.size(), from + per_command);
    command.insert(command.end(), channels.begin() + static_cast<std::ptrdiff_t>(from),
                   channels.begin() + static_cast<std::ptrdiff_t>(to));
    const auto reply = client.call(node, std::move(command));
    if (reply.is_error()) return false;
    // channel, count, channel, count...
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      counts[reply.elements[i].text] += reply.elements[i + 1].integer;
    }
  }
  return true;
}

}  // namespace

void count_subscribers(const relock::client& client,
                       const std::vector<relock::server_node>& masters,
                       std::vector<top_object>& objects) {
  std::vector<std::string> all;
  std::map<std::string, std::vector<std::string>> by_node;
  for (const auto& o : objects) {
    for (auto& channel : channels_of(o)) {
      by_node[o.node].push_back(channel);
      all.push_back(std::move(channel));
    }
  }
  if (all.empty()) return;
  std::map<std::string, std::int64_t> counts;
  bool answered = false;
  for (const auto& node : masters) {
    // Classic pub/sub: a subscriber is counted on the node it subscribed on, any of them in a
    // Cluster.
    answered = add_counts(client, node, "NUMSUB", all, counts) || answered;
    // Sharded: on the master of the channel's slot, which is its object's. Refused by a server
    // before Redis 7, which has none.
    const auto mine = by_node.find(node.address);
    if (mine != by_node.end()) add_counts(client, node, "SHARDNUMSUB", mine->second, counts);
  }
  if (!answered) return;
  for (auto& o : objects) {
    const auto channels = channels_of(o);
    if (channels.empty()) continue;
    std::int64_t n = 0;
    for (const auto& channel : channels) n += counts[channel];
    o.subscribers = n;
  }
}

}  // namespace relock_cli
