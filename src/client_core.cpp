#include "client_core.hpp"

#include <future>
#include <optional>

#include <asio/post.hpp>
#include <relock/errors.hpp>
#include <relock/lock.hpp>  // declares io_of as exported

#include "net/endpoint.hpp"
#include "net/io_loop.hpp"
#include "objects/ids.hpp"

namespace relock::detail {
namespace {

void check_settings(const config& s) {
  auto positive = [](std::chrono::milliseconds d, const char* what) {
    if (d.count() <= 0) throw error(errc::invalid_argument, std::string(what) + " must be > 0");
  };
  positive(s.connect_timeout, "connect_timeout");
  positive(s.command_timeout, "command_timeout");
  positive(s.reconnect_min_delay, "reconnect_min_delay");
  positive(s.reconnect_max_delay, "reconnect_max_delay");
  positive(s.watchdog_lease, "watchdog_lease");
  positive(s.unlock_latch_ttl, "unlock_latch_ttl");
  if (s.renewal_batch == 0) throw error(errc::invalid_argument, "renewal_batch must be > 0");
  if (s.busy_poll.count() < 0 || s.busy_poll > std::chrono::milliseconds(10)) {
    throw error(errc::invalid_argument, "busy_poll must be 0 to 10 ms");
  }
  if (s.command_connections == 0 || s.command_connections > 64) {
    throw error(errc::invalid_argument, "command_connections must be 1 to 64");
  }
}

// Unlock latches deleted per DEL command: a pass of the I/O loop rarely completes more
// releases than this, and a DEL of 128 short keys is still a small request.
constexpr std::size_t keys_per_del = 128;

}  // namespace

client_core::client_core(config settings)
    : settings_(std::move(settings)), id_(objects::random_uuid()), work_(io_.get_executor()) {
  check_settings(settings_);
  net::connection_options options;
  options.target = net::parse_url(settings_.url);
  options.client_name = "relock:" + id_;
  options.connect_timeout = settings_.connect_timeout;
  options.reconnect_min_delay = settings_.reconnect_min_delay;
  options.reconnect_max_delay = settings_.reconnect_max_delay;
  options.log = settings_.log;

  for (std::size_t i = 0; i < settings_.command_connections; ++i) {
    commands_.push_back(net::connection::create(io_, options));
  }
  executor_ = std::make_unique<exec::executor>(io_, commands_,
                                               exec::executor_options{settings_.command_timeout});
  options.push_mode = true;
  auto push_connection = net::connection::create(io_, options);
  subscriber_ = pubsub::subscriber::create(io_, push_connection, settings_.command_timeout,
                                           settings_.publish == publish_mode::sharded);

  waiters_ = std::make_unique<pubsub::waiter_queues>(*subscriber_);
  watchdog_ = std::make_unique<renewal::watchdog>(
      *executor_, *subscriber_,
      renewal::watchdog_options{settings_.watchdog_lease, settings_.renewal_batch,
                                /*group_by_slot=*/false,  // one server for now
                                settings_.on_lock_lost, settings_.log});
  sweeper_ = std::make_unique<exec::key_sweeper>(*executor_, keys_per_del,
                                                 /*group_by_slot=*/false);  // one server
  // One server: sharded pub/sub exists only in Cluster, so auto means classic here.
  publish_command_ = settings_.publish == publish_mode::sharded ? "SPUBLISH" : "PUBLISH";

  thread_ = std::thread([this] {
    net::run_io_loop(io_, settings_.busy_poll,
                     [this] { return executor_->awaiting_replies() > 0; });
  });

  // Every connection must come up before the client is usable: a wrong password or a dead
  // server is reported here, once, instead of on every later call.
  using outcome = std::pair<std::error_code, std::string>;
  std::vector<std::promise<outcome>> up(commands_.size() + 1);
  asio::post(io_, [&] {
    auto report_to = [](std::promise<outcome>& p) {
      return [&p](std::error_code ec, std::string why) { p.set_value({ec, std::move(why)}); };
    };
    for (std::size_t i = 0; i < commands_.size(); ++i) commands_[i]->start(report_to(up[i]));
    push_connection->start(report_to(up.back()));
  });
  std::optional<outcome> failed;
  for (auto& p : up) {
    outcome o = p.get_future().get();
    if (o.first && !failed) failed = std::move(o);
  }
  if (failed) {
    shutdown();
    throw error(failed->first, failed->second);
  }
}

client_core::~client_core() { shutdown(); }

void client_core::shutdown() {
  {
    std::lock_guard gate(gate_);
    stopped_ = true;
  }
  if (!thread_.joinable()) return;
  if (on_io_thread()) {
    // Destroyed from one of its own handlers: stop, but a thread cannot join itself.
    io_.stop();
    thread_.detach();
    return;
  }
  asio::post(io_, [this] { begin_shutdown(); });
  work_.reset();
  thread_.join();
  // Completions posted by handlers that ran last (a caller's handler that started new work,
  // which is refused with cancelled) still run, here: none is dropped unrun.
  io_.restart();
  while (io_.poll() > 0) {
  }
  io_.stop();
}

void client_core::begin_shutdown() {
  watchdog_->stop();
  // Copied: an operation leaves the set as it completes.
  const std::vector<shutdown_aware*> operations(operations_.begin(), operations_.end());
  for (auto* op : operations) {
    if (operations_.contains(op)) op->on_shutdown();
  }
  drain_until_ = std::chrono::steady_clock::now() + settings_.command_timeout;
  drain();
}

void client_core::drain() {
  // What is still on a live connection (an acquire's reply, the release that takes back what a
  // cancelled acquire took) gets its answer while Redis answers; then everything left fails.
  if (executor_->live_outstanding() > 0 && std::chrono::steady_clock::now() < drain_until_) {
    drain_timer_.expires_after(std::chrono::milliseconds(1));
    drain_timer_.async_wait([this](std::error_code) { drain(); });
    return;
  }
  executor_->close();
  subscriber_->close();
  // Posted after the completions that closing queued, so they run before the loop stops.
  asio::post(io_, [this] { io_.stop(); });
}

std::string client_core::key_of(std::string_view name) const {
  return settings_.name_mapper ? settings_.name_mapper(name) : std::string(name);
}

asio::io_context& io_of(client_core& core) { return core.io(); }

}  // namespace relock::detail
