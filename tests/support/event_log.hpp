// SPDX-License-Identifier: Apache-2.0
// An observer that keeps every event of the kinds beyond acquire and release (connections,
// topology, replica sync, refused subscriptions, queue operations, acquire starts), for tests
// that check what a client told its observer. Read from the test's thread under its lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include <relock/observer.hpp>

namespace relock::test {

class event_log : public relock::observer {
 public:
  struct connection {
    std::string address;
    relock::connection_change change;
    std::error_code error;
    std::chrono::microseconds down_for;
  };
  struct topology {
    relock::topology_change change;
    std::string from, to;
    int slot;
  };
  struct replica_sync {
    std::string key;
    int wanted;
    std::int64_t acknowledged;
    std::chrono::microseconds waited;
    std::error_code error;
  };
  struct refusal {
    std::string channel, detail;
  };
  struct queue {
    relock::queue_operation operation;
    std::string key;
    relock::queue_outcome outcome;
    std::error_code error;
    std::chrono::microseconds waited;
    std::int64_t elements;
  };

  void on_acquire_start(const relock::acquire_start_event&) override {
    std::lock_guard guard(mutex_);
    ++starts_;
  }
  void on_acquire(const relock::acquire_event&) override {
    std::lock_guard guard(mutex_);
    ++finishes_;
  }
  void on_connection(const relock::connection_event& e) override {
    std::lock_guard guard(mutex_);
    connections_.push_back({std::string(e.address), e.change, e.error, e.down_for});
  }
  void on_topology(const relock::topology_event& e) override {
    std::lock_guard guard(mutex_);
    topology_.push_back({e.change, std::string(e.from), std::string(e.to), e.slot});
  }
  void on_replica_sync(const relock::replica_sync_event& e) override {
    std::lock_guard guard(mutex_);
    syncs_.push_back({std::string(e.key), e.wanted, e.acknowledged, e.waited, e.error});
  }
  void on_subscription_refused(const relock::subscription_event& e) override {
    std::lock_guard guard(mutex_);
    refusals_.push_back({std::string(e.channel), std::string(e.detail)});
  }
  void on_queue(const relock::queue_event& e) override {
    std::lock_guard guard(mutex_);
    queues_.push_back({e.operation, std::string(e.key), e.outcome, e.error, e.waited, e.elements});
  }

  // Acquires begun and finished.
  std::pair<int, int> acquires() const {
    std::lock_guard guard(mutex_);
    return {starts_, finishes_};
  }
  std::vector<connection> connections() const { return copy(connections_); }
  std::vector<topology> topology_changes() const { return copy(topology_); }
  std::vector<replica_sync> syncs() const { return copy(syncs_); }
  std::vector<refusal> refusals() const { return copy(refusals_); }
  std::vector<queue> queue_operations() const { return copy(queues_); }

 private:
  template <class T>
  std::vector<T> copy(const std::vector<T>& v) const {
    std::lock_guard guard(mutex_);
    return v;
  }

  mutable std::mutex mutex_;
  int starts_ = 0, finishes_ = 0;
  std::vector<connection> connections_;
  std::vector<topology> topology_;
  std::vector<replica_sync> syncs_;
  std::vector<refusal> refusals_;
  std::vector<queue> queues_;
};

}  // namespace relock::test
