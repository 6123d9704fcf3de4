// What a relock::client owns: settings, id, the I/O thread and the services on it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <relock/config.hpp>

#include "exec/executor.hpp"
#include "exec/key_sweeper.hpp"
#include "net/connection.hpp"
#include "pubsub/subscriber.hpp"
#include "pubsub/waiter_queue.hpp"
#include "renewal/watchdog.hpp"

namespace relock::detail {

class client_core {
 public:
  // Connects the command and subscriber connections; throws relock::error on failure.
  explicit client_core(config settings);
  ~client_core();

  // Stops the I/O thread: work under way completes with errc::cancelled. Called by
  // ~client while it still holds its reference, so the last reference (often inside a
  // handler) can never be dropped on the I/O thread itself, which cannot join itself.
  void shutdown();
  bool stopped() const { return stopped_.load(); }
  client_core(const client_core&) = delete;
  client_core& operator=(const client_core&) = delete;

  void log(log_level level, std::string_view text) const {
    if (settings_.log) settings_.log(level, text);
  }
  bool on_io_thread() const { return io_.get_executor().running_in_this_thread(); }

  const config& settings() const { return settings_; }
  const std::string& id() const { return id_; }
  asio::io_context& io() { return io_; }
  exec::executor& executor() { return *executor_; }
  pubsub::subscriber& subscriber() { return *subscriber_; }
  pubsub::waiter_queues& waiters() { return *waiters_; }
  renewal::watchdog& watchdog() { return *watchdog_; }
  exec::key_sweeper& sweeper() { return *sweeper_; }
  // PUBLISH or SPUBLISH, for the scripts (compat §1).
  const std::string& publish_command() const { return publish_command_; }
  // The key of a user-visible name, through config::name_mapper.
  std::string key_of(std::string_view name) const;

 private:

  config settings_;
  std::string id_;
  mutable asio::io_context io_;  // mutable: asking "am I on its thread?" changes nothing
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  std::vector<std::shared_ptr<net::connection>> commands_;
  std::unique_ptr<exec::executor> executor_;
  std::shared_ptr<pubsub::subscriber> subscriber_;
  std::unique_ptr<pubsub::waiter_queues> waiters_;
  std::unique_ptr<renewal::watchdog> watchdog_;
  std::unique_ptr<exec::key_sweeper> sweeper_;
  std::string publish_command_;
};

}  // namespace relock::detail
