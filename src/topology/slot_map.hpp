// SPDX-License-Identifier: Apache-2.0
// Which node serves each of a Redis Cluster's 16384 slots: its master and its replicas, read
// from the reply of CLUSTER SHARDS (Redis 7) or CLUSTER SLOTS (older servers, and Redis 7 too).
// https://redis.io/commands/cluster-shards/  https://redis.io/commands/cluster-slots/
//
// A value type without I/O: build it from a reply, look slots up, apply a MOVED, compare two
// maps to see whether a refresh changed anything. Not synchronized: one thread owns a map (the
// router swaps in a new one after a refresh). The parsers never throw and never read past a
// reply's elements: a reply they cannot read gives nullopt, and `why` (when given) says what
// was wrong, for the log line of a refresh that keeps the old map.
//
// Memory: one 16-bit index per slot (32 KiB) into a small table of shards, so a copy is cheap
// next to the round trip that fetched it; a map read from a TLS cluster's CLUSTER SHARDS shares
// a second one, its TLS twin (see from_shards).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "resp/reply.hpp"
#include "topology/slot.hpp"

namespace relock::topology {

// A node as a client reaches it. The host is an IPv4 address, a hostname or an IPv6 address
// without brackets, never empty: an endpoint the server leaves unknown has already been replaced
// by the host of the node that answered (see from_shards).
struct node {
  std::string host;
  std::uint16_t port = 0;

  std::string address() const;  // host:port, [v6]:port

  friend bool operator==(const node&, const node&) = default;
};

// Which of its ports a client reaches a node by: the plain-text one, or its TLS port. Redis 7
// announces a node's TLS port only with tls-cluster yes ("tls-port" in CLUSTER SHARDS, and the
// port of a MOVED, ASK or CLUSTER SLOTS answered over TLS).
enum class port_kind { plain, tls };

class slot_map {
 public:
  // An empty map: no slot is served.
  slot_map();

  // From CLUSTER SHARDS: an array of shards, each a flat key/value array with "slots" (a flat
  // list of start, end integers) and "nodes" (each a flat key/value array: "id", "port", "ip",
  // "endpoint", "role", "replication-offset", "health", and "hostname" or "tls-port" when set).
  // `answering_host` is the host relock used to reach the node that answered.
  //
  // A node's host: its "endpoint" when usable; "" there means the cluster runs with
  // cluster-preferred-endpoint-type unknown-endpoint (nodes behind a load balancer), and the
  // documented answer is the host we reached the cluster by, `answering_host`; "?" means
  // hostnames are preferred but this node has none (a misconfiguration), and its "ip" is the best
  // address known; an "ip" that is empty or "?" too falls back to `answering_host`.
  //
  // Health: a master whose health is "fail" serves nothing (the cluster has declared it dead and
  // answers CLUSTERDOWN for its slots until a replica takes over), so its slots stay uncovered:
  // master_of() gives nullptr and covers_all() false, which tells the caller to refresh again
  // later. A "loading" master keeps its slots (it is the owner; it answers LOADING until it has
  // read its data, a transient error for the retry policy). Replicas count only when "online".
  //
  // With cluster-preferred-endpoint-type hostname the "endpoint" is the name the node announces
  // (cluster-announce-hostname), which is what a TLS client must connect by: the name its
  // certificate carries, where the "ip" seldom is.
  //
  // Ports: the reply names both of a TLS cluster's ports whichever connection asked, so the map
  // keeps both: its nodes are at their plain-text "port", and for_ports(port_kind::tls) gives
  // the same map at their "tls-port" when every serving node has one. A cluster without
  // plain-text ports (port 0: no "port" field) gives the TLS map directly.
  //
  // nullopt when the reply is an error (Redis < 7 answers "ERR unknown subcommand": use
  // from_slots), is not shaped as above, has a slot range out of 0..16383 or backwards, a slot
  // claimed by two shards, or a serving node with neither port. Shards without slots (an empty or
  // failed master) are skipped.
  static std::optional<slot_map> from_shards(const resp::reply& reply,
                                             std::string_view answering_host,
                                             std::string* why = nullptr);

  // From CLUSTER SLOTS: an array of [start, end, master, replica...], each node an array
  // [host, port, id, metadata] (id since Redis 4, metadata since 7: a flat key/value array that
  // may hold "ip" and "hostname"). The host is a null reply under unknown-endpoint, "?" when
  // hostnames are preferred but unset, "" when the node does not know its own address: the same
  // rules as from_shards apply, with the metadata's "ip" standing in for the node's "ip". This
  // reply carries no health: a failed master keeps its slots, and failed replicas are left out
  // by the server itself. Its ports are those of the connection that asked (`asked_over`): Redis
  // answers a TLS connection with the TLS ports when tls-cluster is on.
  static std::optional<slot_map> from_slots(const resp::reply& reply,
                                            std::string_view answering_host,
                                            std::string* why = nullptr,
                                            port_kind asked_over = port_kind::plain);

  // Which ports the nodes of this map are at.
  port_kind ports() const { return ports_; }
  // This map as a client that speaks `kind` reaches it: itself when its nodes are at those
  // ports already, its TLS twin from CLUSTER SHARDS; nullopt (and `why`) when the reply that
  // built it named no such ports.
  std::optional<slot_map> for_ports(port_kind kind, std::string* why = nullptr) const;

  // The master serving `slot`, or nullptr when no healthy master does (or slot >= 16384). The
  // pointer stays valid until the map is next modified or destroyed.
  const node* master_of(std::uint16_t slot) const;

  // The online replicas of the master serving `slot`, sorted by host and port; empty when there
  // are none or the slot is not served.
  std::span<const node> replicas_of(std::uint16_t slot) const;

  // Each master that serves at least one slot, once, ordered by the first slot it serves.
  std::vector<node> masters() const;

  // True when every one of the 16384 slots has a master.
  bool covers_all() const;

  // Applies "MOVED <slot> <host>:<port>": the slot now belongs to `to` (its host already
  // resolved: an empty or "?" host in the redirection is the host of the connection that got
  // it). Replicas of `to` are those known for it as a master, else none until the next refresh.
  // The map's TLS twin, if any, is dropped: it no longer describes this map.
  void moved(std::uint16_t slot, node to);

  // Same ports, same master and same replicas for every slot, however each map was built.
  friend bool operator==(const slot_map& a, const slot_map& b);

 private:
  struct shard {
    node master;
    std::vector<node> replicas;
  };
  static constexpr std::uint16_t no_shard = 0xffff;

  static std::optional<slot_map> parse_shards(const resp::reply& reply,
                                              std::string_view answering_host, port_kind kind,
                                              std::string* why);
  const shard* shard_of(std::uint16_t slot) const;
  // The shard whose master is `master`, added (without replicas) when there is none.
  std::uint16_t shard_for(const node& master);
  void add_replica(std::uint16_t shard, node replica);

  std::vector<shard> shards_;
  std::array<std::uint16_t, slot_count> owner_;  // index into shards_, or no_shard
  port_kind ports_ = port_kind::plain;
  // The same map at the nodes' TLS ports, when CLUSTER SHARDS named them (see from_shards).
  std::shared_ptr<const slot_map> tls_view_;
};

}  // namespace relock::topology
