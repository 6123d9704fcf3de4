// SPDX-License-Identifier: Apache-2.0
// What a relock::client owns: settings, id, the I/O thread and the services on it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <relock/config.hpp>
#include <relock/detail/completion.hpp>
#include <relock/errors.hpp>

#include "containers/block_cache.hpp"
#include "containers/spare_nodes.hpp"
#include "exec/blocking_pool.hpp"
#include "exec/executor.hpp"
#include "exec/key_sweeper.hpp"
#include "master_watch.hpp"
#include "net/connection.hpp"
#include "pubsub/channel_pair.hpp"
#include "pubsub/subscriber.hpp"
#include "pubsub/subscriber_set.hpp"
#include "pubsub/waiter_queue.hpp"
#include "renewal/watchdog.hpp"

namespace relock::detail {

namespace waiting {
class take_back_book;
}

// An operation that shutdown must end itself (an acquire that waits, or whose script may be
// running): it completes with errc::cancelled and takes back any hold it may have taken.
class shutdown_aware {
 public:
  virtual void on_shutdown() = 0;  // I/O thread

 protected:
  ~shutdown_aware() = default;
};

class client_core {
 public:
  // Connects the command and subscriber connections; throws relock::error on failure.
  explicit client_core(config settings);
  ~client_core();

  // Stops the I/O thread: every operation under way completes with errc::cancelled, after
  // acquires in flight have released what they may have taken (while Redis answers, for at
  // most command_timeout). Called by ~client while it still holds its reference, so the last
  // reference (often inside a handler) can never be dropped on the I/O thread itself, which
  // cannot join itself.
  void shutdown();
  bool stopped() const { return stopped_.load(); }

  // The one door from any thread to the I/O thread: runs f(true) there, or f(false) at once on
  // the calling thread when the client is shutting down (f then completes with cancelled).
  // Nothing enters after shutdown has begun, so nothing posted is ever left unrun.
  template <class F>
  void enter(F&& f) {
    if (on_io_thread()) return f(!stopped_.load());
    std::unique_lock gate(gate_);
    if (stopped_) {
      gate.unlock();
      return f(false);
    }
    asio::post(io_, [f = std::forward<F>(f)]() mutable { f(true); });
  }

  // Operations that shutdown must end (I/O thread only).
  void track(shutdown_aware& op) {
    if (auto node = spare_operations_.take()) {
      node.value() = &op;
      operations_.insert(std::move(node));
    } else {
      operations_.insert(&op);
    }
  }
  void untrack(shutdown_aware& op) {
    if (auto it = operations_.find(&op); it != operations_.end()) {
      spare_operations_.keep(operations_, it);
    }
  }

  // A caller's completion that shutdown may end first, with errc::cancelled: whichever comes
  // first calls it, once. For work whose request may stay on the wire (a query, a release): the
  // caller is told at once, the request still gets its chance while the connection drains. I/O
  // thread only; the result too must be called (or dropped) there.
  template <class... Rest>
  completion<void(std::error_code, Rest...)> guard(completion<void(std::error_code, Rest...)> done);
  client_core(const client_core&) = delete;
  client_core& operator=(const client_core&) = delete;

  void log(log_level level, std::string_view text) const {
    if (settings_.log) settings_.log(level, text);
  }
  bool on_io_thread() const { return io_.get_executor().running_in_this_thread(); }

  const config& settings() const { return settings_; }
  const std::string& id() const { return id_; }
  // Which server this client talks to, as the server itself says, learnt once at startup: one
  // server (or Sentinel's master then), "run_id:" and its INFO run_id, or "address:host:port"
  // when INFO shows none; a cluster, "cluster:" and its masters in slot order. Equal for two
  // clients of one server however its address was spelled (a red_lock counts it once).
  const std::string& server_id() const { return server_id_; }
  asio::io_context& io() { return io_; }
  exec::executor& executor() { return *executor_; }
  // Connections for blocking commands (I/O thread only).
  exec::blocking_pool& blocking() { return *blocking_; }
  // The one subscriber (none with sharded pub/sub in a cluster: see channels()).
  pubsub::subscriber& subscriber() { return *subscriber_; }
  pubsub::channels& channels() { return *channels_; }
  bool sharded_pubsub() const { return subscribers_ != nullptr; }
  pubsub::waiter_queues& waiters() { return *waiters_; }
  renewal::watchdog& watchdog() { return *watchdog_; }
  exec::key_sweeper& sweeper() { return *sweeper_; }
  // Take-backs of lost tries not answered yet (I/O thread only).
  waiting::take_back_book& take_backs() { return *take_backs_; }
  // PUBLISH or SPUBLISH, for the scripts (data-layout §1).
  const std::string& publish_command() const { return publish_command_; }
  // Whether a script's publish counts every listener of the channel: not with classic pub/sub
  // in a Cluster, where PUBLISH counts only the node's own (data-layout §3, unheard heads).
  bool publish_counts_listeners() const;
  // One server: who is master now, how many replicas a lock write waits for, and how many
  // acknowledged the last one (-1: none yet). I/O thread only.
  const master_watch* watch() const { return watch_.get(); }
  // Tasks shared by the handles that need one (a delayed queue's transfer), by name: made by
  // `make` on first use, kept while some handle holds what it returned. Any thread.
  template <class Make>
  std::shared_ptr<void> shared_task(const std::string& name, Make make) {
    std::lock_guard lock(tasks_mutex_);
    auto& slot = tasks_[name];
    if (auto held = slot.lock()) return held;
    auto held = make();
    slot = held;
    return held;
  }
  // Forgets the task of `name` (the next shared_task makes a new one); returns it, if held.
  std::shared_ptr<void> drop_task(const std::string& name) {
    std::lock_guard lock(tasks_mutex_);
    auto it = tasks_.find(name);
    if (it == tasks_.end()) return nullptr;
    auto held = it->second.lock();
    tasks_.erase(it);
    return held;
  }

  // The key of a user-visible name, through config::name_mapper.
  std::string key_of(std::string_view name) const;

  // Sentinel: the URL's sentinels and how to reach them (their credentials, their TLS); empty
  // otherwise. Set once by the constructor.
  const std::vector<net::endpoint>& sentinels() const { return sentinels_; }
  const net::connection_options& sentinel_options() const { return sentinel_options_; }

 private:
  void begin_shutdown();
  void drain();
  exec::executor_options executor_options(replica_sync_mode sync);
  std::optional<std::pair<std::error_code, std::string>> start_watching(
      const net::endpoint& server, master_watch_options watching, bool sentinel);
  // A subscription the server keeps refusing (NOPERM: the ACL rules leave a channel out) would
  // leave waiters to their timers alone: said in the log, once per distinct refusal.
  void tell_refusals(pubsub::subscriber& s);

  config settings_;
  std::string id_;
  std::string server_id_;        // set once by the constructor, read-only afterwards
  mutable asio::io_context io_;  // mutable: asking "am I on its thread?" changes nothing
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  std::mutex gate_;  // orders enter() against the start of shutdown
  std::atomic<bool> stopped_{false};
  using operation_set = std::unordered_set<shutdown_aware*>;
  operation_set operations_;
  containers::spare_nodes<operation_set> spare_operations_;
  asio::steady_timer drain_timer_{io_};
  std::chrono::steady_clock::time_point drain_until_{};
  std::unique_ptr<exec::executor> executor_;
  std::unique_ptr<exec::blocking_pool> blocking_;
  std::shared_ptr<pubsub::subscriber> subscriber_;       // one server, or classic in a cluster
  std::unique_ptr<pubsub::subscriber_set> subscribers_;  // sharded in a cluster
  std::unique_ptr<pubsub::channel_pair> pair_;           // both, in a cluster
  pubsub::channels* channels_ = nullptr;                 // whichever is in use
  std::unique_ptr<pubsub::waiter_queues> waiters_;
  std::unique_ptr<renewal::watchdog> watchdog_;
  std::unique_ptr<exec::key_sweeper> sweeper_;
  std::unique_ptr<waiting::take_back_book> take_backs_;
  std::shared_ptr<net::connection> push_connection_;  // one server: the subscriber's
  std::unique_ptr<master_watch> watch_;               // one server: follows the master
  std::string publish_command_;
  std::vector<net::endpoint> sentinels_;
  net::connection_options sentinel_options_;
  std::mutex tasks_mutex_;
  std::unordered_map<std::string, std::weak_ptr<void>> tasks_;
};

template <class... Rest>
completion<void(std::error_code, Rest...)> client_core::guard(
    completion<void(std::error_code, Rest...)> done) {
  struct guarded final : shutdown_aware {
    client_core* core = nullptr;
    completion<void(std::error_code, Rest...)> done;
    void on_shutdown() override { finish(make_error_code(errc::cancelled), Rest{}...); }
    void finish(std::error_code ec, Rest... rest) {
      if (!done) return;
      core->untrack(*this);
      std::exchange(done, {})(ec, std::move(rest)...);
    }
    ~guarded() {
      if (done) core->untrack(*this);
    }
  };
  auto state = containers::make_cached<guarded>();
  state->core = this;
  state->done = std::move(done);
  track(*state);
  return [state](std::error_code ec, Rest... rest) { state->finish(ec, std::move(rest)...); };
}

}  // namespace relock::detail
