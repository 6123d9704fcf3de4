// SPDX-License-Identifier: Apache-2.0
// What the sentinels say about the master relock follows: read from their replies and their
// event messages, with the decision of when to ask them again. No I/O: the master watch asks
// and listens (exec/master_watch.hpp), this reads and decides.
// https://redis.io/docs/management/sentinel/ (Sentinel API, Pub/Sub messages)
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resp/reply.hpp"
#include "topology/slot_map.hpp"

namespace relock::topology {

class sentinel_view {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  // The channels a sentinel publishes its events on that can change where relock writes or how
  // many replicas may acknowledge it.
  static const std::vector<std::string_view>& channels();

  // `period`: how often to ask when nothing is wrong.
  sentinel_view(std::string master_name, node master, int replicas,
                std::chrono::milliseconds period = default_period)
      : name_(std::move(master_name)),
        master_(std::move(master)),
        replicas_(replicas),
        period_(period) {}

  const std::string& master_name() const { return name_; }
  const node& master() const { return master_; }
  int replicas() const { return replicas_; }

  // SENTINEL GET-MASTER-ADDR-BY-NAME's reply: the master's address; nullopt with `why` when the
  // sentinel does not know the name (nil) or the reply cannot be read.
  static std::optional<node> read_master(const resp::reply& r, std::string* why = nullptr);
  // SENTINEL REPLICAS' reply: how many replicas could take over and acknowledge writes, those
  // Sentinel sees neither down nor disconnected, that report the replica role and whose master
  // Sentinel has heard of (INFO); nullopt when the reply cannot be read.
  static std::optional<int> count_replicas(const resp::reply& r);

  // A sentinel's event. +switch-master of this master names the new one (still to be confirmed
  // with ROLE); a replica of it going down, coming back or appearing asks for a new count.
  struct news {
    std::optional<node> new_master;
    bool ask = false;
  };
  news heard(std::string_view channel, std::string_view payload) const;

  // A new master, confirmed (ROLE master); a fresh count of replicas.
  void moved(node to) { master_ = std::move(to); }
  void counted(int replicas) { replicas_ = replicas; }

  // When to ask the sentinels again: every `period`, and after trouble (a lost connection, a
  // write refused by a replica) as soon as `min_gap` allows.
  void trouble() { stale_ = true; }
  time_point next_ask() const { return last_ask_ + (stale_ ? min_gap : period_); }
  bool ask_due(time_point now) const { return now >= next_ask(); }
  void asking(time_point now) {
    stale_ = false;
    last_ask_ = now;
  }

  static constexpr std::chrono::milliseconds min_gap{100};
  // As Redisson's sentinel scan interval: a client that missed +switch-master (its sentinel
  // connection was down) finds the new master within a second.
  static constexpr std::chrono::milliseconds default_period{1'000};

 private:
  std::string name_;
  node master_;
  int replicas_ = 0;
  std::chrono::milliseconds period_;
  bool stale_ = false;
  time_point last_ask_{};
};

}  // namespace relock::topology
