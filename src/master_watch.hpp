// SPDX-License-Identifier: Apache-2.0
// Keeps a one-server client on its master, and its replica sync sized (data-layout §1).
//
// With Sentinel: asks the sentinels in turn (SENTINEL GET-MASTER-ADDR-BY-NAME and SENTINEL
// REPLICAS) every second, and at once after trouble (a lost connection, a write a replica
// refused); listens on a sentinel for +switch-master and its replicas' ups and downs. A master
// Sentinel names is confirmed with ROLE before everything moves there: the executor's
// connections, the subscriber's (whose waiters resubscribe and are woken) and with them the
// renewals. WAIT is sized by the replicas Sentinel sees, not by the master's own
// connected_slaves: a demoted master that still takes writes for a while after a failover has
// none, and a write there must not count as synced.
// Without Sentinel: asks the master (INFO replication) every 10 s and after trouble how many
// replicas are online, unless the URL lists them (?replicas=).
//
// I/O thread only, after start().
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "exec/executor.hpp"
#include "net/connection.hpp"
#include "pubsub/subscriber.hpp"
#include "topology/replication.hpp"
#include "topology/sentinel_view.hpp"

namespace relock::detail {

struct master_watch_options {
  std::vector<net::endpoint> sentinels;  // with the sentinels' credentials; empty: no Sentinel
  std::string master_name;
  net::connection_options sentinel_connection;  // for the sentinels (target ignored)
  net::connection_options data;                 // for a new master's ROLE (target ignored)
  topology::replication sync;                   // the mode, and the replicas known at start
  bool aof = false;                             // WAITAOF instead of WAIT
  bool listed_replicas = false;                 // the URL lists them: no count to ask for
  std::chrono::milliseconds command_timeout{3'000};
  std::function<void(const topology::node&)> on_moved;  // everything else follows the master
  std::function<void(log_level, std::string_view)> log;
};

class master_watch {
 public:
  master_watch(asio::io_context& io, exec::executor& executor, master_watch_options options,
               topology::node master);
  ~master_watch();

  void start();
  // Something suggests the master moved or the replicas changed: look soon.
  void trouble();
  void close();

  bool sentinel() const { return !options_.sentinels.empty(); }
  const topology::node& master() const { return view_.master(); }
  int known_replicas() const { return options_.sync.known_replicas; }

 private:
  void schedule();
  void ask();
  void ask_sentinel();
  void ask_master();
  void heard(const pubsub::event& e);
  void confirm(const topology::node& candidate);
  void counted(int replicas);
  void log(log_level level, const std::string& text) const;

  asio::io_context& io_;
  exec::executor& executor_;
  master_watch_options options_;
  topology::sentinel_view view_;
  asio::steady_timer timer_;
  std::shared_ptr<net::connection> asker_;        // to a sentinel, for questions
  std::shared_ptr<pubsub::subscriber> listener_;  // to a sentinel, for its events
  std::shared_ptr<net::connection> prober_;       // asks a new master its ROLE
  std::vector<pubsub::listener_ptr> channels_;
  std::size_t turn_ = 0;  // the sentinel asked next
  bool asking_ = false;
  bool confirming_ = false;
  bool closed_ = false;
  // The last refusal of a named master that was logged: while Sentinel and the node disagree it
  // is asked again every ask gap, and said again only when something else is wrong.
  std::string refusal_logged_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The replicas a master's INFO replication lists as online ("slaveN:...,state=online,...").
int online_replicas(std::string_view info);
// Those of them whose acknowledged offset has reached the master's (master_repl_offset).
int caught_up_replicas(std::string_view info);

}  // namespace relock::detail
