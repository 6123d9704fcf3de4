// SPDX-License-Identifier: Apache-2.0
#include "client_core.hpp"

#include <future>
#include <optional>

#include <asio/post.hpp>
#include <relock/errors.hpp>
#include <relock/lock.hpp>  // declares io_of as exported
#include <relock/observer.hpp>

#include "exec/cluster_discovery.hpp"
#include "exec/sentinel_discovery.hpp"
#include "info_text.hpp"
#include "layout/client_name.hpp"
#include "layout/ids.hpp"
#include "net/endpoint.hpp"
#include "net/io_loop.hpp"
#include "net/tls_context.hpp"
#include "pubsub/channel_pair.hpp"
#include "pubsub/subscriber_set.hpp"
#include "waiting/take_back_book.hpp"

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
  if (s.unlock_latch_sweep_delay.count() < 0 ||
      s.unlock_latch_sweep_delay > std::chrono::seconds(10) ||
      s.unlock_latch_sweep_delay >= s.unlock_latch_ttl) {
    throw error(errc::invalid_argument,
                "unlock_latch_sweep_delay must be 0 to 10 s and below unlock_latch_ttl");
  }
  positive(s.fair_lock_wait_timeout, "fair_lock_wait_timeout");
  positive(s.fair_lock_unheard_head_timeout, "fair_lock_unheard_head_timeout");
  positive(s.spin_backoff.initial, "spin_backoff.initial");
  if (s.spin_backoff.max < s.spin_backoff.initial || s.spin_backoff.max > std::chrono::hours(1)) {
    throw error(errc::invalid_argument,
                "spin_backoff.max must be >= spin_backoff.initial and at most an hour");
  }
  if (s.renewal_batch == 0) throw error(errc::invalid_argument, "renewal_batch must be > 0");
  if (s.busy_poll.count() < 0 || s.busy_poll > std::chrono::milliseconds(10)) {
    throw error(errc::invalid_argument, "busy_poll must be 0 to 10 ms");
  }
  if (s.max_value_size == 0 || s.max_value_size > 512u * 1024 * 1024) {
    throw error(errc::invalid_argument, "max_value_size must be 1 byte to 512 MiB");
  }
  if (s.command_connections == 0 || s.command_connections > 64) {
    throw error(errc::invalid_argument, "command_connections must be 1 to 64");
  }
  if (auto problem = layout::client_name_problem(s.client_name)) {
    throw error(errc::invalid_argument, *problem);
  }
  positive(s.replica_sync_timeout, "replica_sync_timeout");
  if (s.replica_sync_attempts == 0 || s.replica_sync_attempts > 100) {
    throw error(errc::invalid_argument, "replica_sync_attempts must be 1 to 100");
  }
}

// Unlock latches deleted per DEL command: a DEL of 128 short keys is still a small request, and a
// full batch leaves without waiting for config::unlock_latch_sweep_delay.
constexpr std::size_t keys_per_del = 128;

}  // namespace

bool client_core::publish_counts_listeners() const {
  return !executor_->cluster() || publish_command_ == "SPUBLISH";
}

client_core::client_core(config settings)
    : settings_(std::move(settings)), id_(layout::random_uuid()), work_(io_.get_executor()) {
  check_settings(settings_);
  const net::target target = net::parse_target(settings_.url);
  const bool cluster = target.deployment == net::target::mode::cluster;
  const bool sentinel = target.deployment == net::target::mode::sentinel;
  net::connection_options options;
  options.target = target.nodes.front();
  options.client_name = layout::client_name(settings_.client_name, id_);
  options.connect_timeout = settings_.connect_timeout;
  options.reconnect_min_delay = settings_.reconnect_min_delay;
  options.reconnect_max_delay = settings_.reconnect_max_delay;
  options.log = settings_.log;
  options.observer = settings_.observer;
  // TLS: the URL's tls_* options over the settings; the sentinels and the data nodes may
  // differ (rediss-sentinel://...?tls=sentinels|data).
  net::tls_client sentinel_tls;
  if (target.tls_data || target.tls_sentinels) {
    tls_settings tls = settings_.tls;
    if (target.tls_ca) tls.ca_file = *target.tls_ca;
    if (target.tls_cert) tls.cert_file = *target.tls_cert;
    if (target.tls_key) tls.key_file = *target.tls_key;
    if (target.tls_server_name) tls.server_name = *target.tls_server_name;
    net::tls_client client = net::make_tls_client(tls);
    if (!client.verify) {
      log(log_level::warning,
          "TLS without verification (tls.insecure_skip_verification): anyone between relock and "
          "Redis can read and change the traffic, the password included");
    }
    if (target.tls_data) options.tls = client;
    if (target.tls_sentinels) sentinel_tls = client;
  }
  // The URL's ?pubsub= overrides the setting.
  const publish_mode publish = target.pubsub.value_or(settings_.publish);
  master_watch_options watching;
  watching.sync.mode = target.replica_sync.value_or(settings_.replica_sync);
  watching.command_timeout = settings_.command_timeout;
  watching.log = settings_.log;
  if (!target.replicas.empty()) {
    watching.listed_replicas = true;
    watching.sync.known_replicas = static_cast<int>(target.replicas.size());
  }
  if (sentinel) {
    // The sentinels have credentials of their own; the URL's are the data nodes'.
    watching.master_name = target.master_name;
    watching.sentinel_connection = options;
    watching.sentinel_connection.tls = sentinel_tls;
    for (net::endpoint s : target.nodes) {
      s.user = settings_.sentinel_user;
      s.password = settings_.sentinel_password;
      s.db = 0;
      watching.sentinels.push_back(std::move(s));
    }
    watching.data = options;
    sentinels_ = watching.sentinels;
    sentinel_options_ = watching.sentinel_connection;
    auto found =
        exec::discover_master(watching.sentinels, target.master_name, watching.sentinel_connection,
                              options, settings_.command_timeout);
    options.target.host = found.master.host;
    options.target.port = found.master.port;
    watching.sync.known_replicas = found.replicas;
    watching.data = options;
  }
  bool sharded = publish == publish_mode::sharded;

  // Every connection must come up before the client is usable: a wrong password or a dead
  // server is reported here, once, instead of on every later call.
  std::vector<std::shared_ptr<net::connection>> to_start;
  // Both kept by the executor's pool factory, so they hold copies of what they use.
  auto connections_to = [this, options](const net::endpoint& where) {
    exec::pool pool;
    auto o = options;
    o.target = where;
    for (std::size_t i = 0; i < settings_.command_connections; ++i) {
      pool.push_back(net::connection::create(io_, o));
    }
    return pool;
  };
  // Every node of a cluster gets the URL's credentials and database (Valkey 9's
  // cluster-databases; 0 elsewhere).
  auto endpoint_of = [credentials = target.nodes.front()](const topology::node& n) {
    net::endpoint e = credentials;
    e.host = n.host;
    e.port = n.port;
    return e;
  };
  if (cluster) {
    auto [map, sharded_answers] =
        exec::discover_cluster(target.nodes, options, settings_.command_timeout);
    // auto: sharded where the cluster has it (Redis 7), as Redisson 3.22 and later do.
    sharded = sharded || (publish == publish_mode::auto_detect && sharded_answers);
    std::vector<std::pair<topology::node, exec::pool>> pools;
    for (const auto& master : map.masters()) {
      pools.emplace_back(master, connections_to(endpoint_of(master)));
      to_start.insert(to_start.end(), pools.back().second.begin(), pools.back().second.end());
    }
    if (pools.empty()) throw error(errc::connection, "the cluster has no master serving slots");
    // The same for every client of the cluster, whichever seed it came in by.
    server_id_ = "cluster:";
    for (const auto& p : pools) server_id_ += " " + p.first.address();
    options.target = endpoint_of(pools.front().first);
    // A node met later (a MOVED, a new master) gets its pool when first needed.
    auto make_pool = [this, connections_to, endpoint_of](const topology::node& n) {
      auto pool = connections_to(endpoint_of(n));
      for (auto& c : pool) c->start();
      return pool;
    };
    // Refreshed maps must stay at the ports this client speaks (a TLS cluster names both).
    const auto ports = target.tls_data ? topology::port_kind::tls : topology::port_kind::plain;
    executor_ = std::make_unique<exec::executor>(io_, topology::router(std::move(map), ports),
                                                 std::move(pools), std::move(make_pool),
                                                 executor_options(watching.sync.mode));
  } else {
    auto pool = connections_to(options.target);
    to_start = pool;
    executor_ = std::make_unique<exec::executor>(io_, std::move(pool),
                                                 executor_options(watching.sync.mode));
  }
  // Blocking commands get connections of their own, made on demand (blocking_pool.hpp).
  blocking_ = std::make_unique<exec::blocking_pool>(io_, options);
  options.push_mode = true;
  const bool both = cluster && publish == publish_mode::both;
  if (cluster && (sharded || both)) {
    // A subscriber per node, each channel on its slot's master (subscriber_set.hpp).
    auto make = [this, options, endpoint_of](const topology::node& n) {
      auto o = options;
      o.target = endpoint_of(n);
      auto c = net::connection::create(io_, o);
      auto s = pubsub::subscriber::create(io_, c, settings_.command_timeout, /*sharded=*/true);
      tell_refusals(*s);
      c->start();
      return s;
    };
    subscribers_ = std::make_unique<pubsub::subscriber_set>(
        io_, [this](std::string_view channel) { return executor_->node_for(channel); },
        [this](std::uint16_t slot, const topology::node& to) { executor_->learn_moved(slot, to); },
        std::move(make));
    channels_ = subscribers_.get();
  }
  if (!cluster || !sharded || both) {
    // Classic pub/sub reaches every node of a cluster through the cluster bus, so one
    // subscriber connection (to the first master) hears every channel.
    if (cluster) {
      // When the subscriber's node is lost, the next reconnect tries the next master.
      options.next_target = [this, endpoint_of,
                             turn = std::size_t{0}]() mutable -> std::optional<net::endpoint> {
        auto masters = executor_->masters();
        if (masters.empty()) return std::nullopt;
        return endpoint_of(masters[turn++ % masters.size()]);
      };
    }
    auto push_connection = net::connection::create(io_, options);
    subscriber_ = pubsub::subscriber::create(io_, push_connection, settings_.command_timeout,
                                             sharded && !both);
    tell_refusals(*subscriber_);
    to_start.push_back(push_connection);
    if (!cluster) push_connection_ = push_connection;
    channels_ = subscriber_.get();
  }
  if (both) {
    pair_ = std::make_unique<pubsub::channel_pair>(*subscriber_, *subscribers_);
    channels_ = pair_.get();
  }

  waiters_ = std::make_unique<pubsub::waiter_queues>(*channels_);
  // A script may touch keys of one slot only in a cluster: renewals and latch sweeps go by slot.
  watchdog_ = std::make_unique<renewal::watchdog>(
      *executor_, *channels_,
      renewal::watchdog_options{settings_.watchdog_lease, settings_.renewal_batch, cluster,
                                settings_.on_lock_lost, settings_.log, settings_.observer.get()});
  sweeper_ = std::make_unique<exec::key_sweeper>(*executor_, keys_per_del, cluster,
                                                 settings_.unlock_latch_sweep_delay);
  take_backs_ = std::make_unique<waiting::take_back_book>();
  // Sharded pub/sub exists only in Cluster: auto means classic on one server.
  publish_command_ = both ? "PUBLISH+SPUBLISH" : sharded ? "SPUBLISH" : "PUBLISH";

  thread_ = std::thread([this] {
    net::run_io_loop(io_, settings_.busy_poll,
                     [this] { return executor_->awaiting_replies() > 0; });
  });

  using outcome = std::pair<std::error_code, std::string>;
  std::vector<std::promise<outcome>> up(to_start.size());
  asio::post(io_, [&] {
    for (std::size_t i = 0; i < to_start.size(); ++i) {
      to_start[i]->start([&p = up[i]](std::error_code ec, std::string why) {
        p.set_value({ec, std::move(why)});
      });
    }
  });
  std::optional<outcome> failed;
  for (auto& p : up) {
    outcome o = p.get_future().get();
    if (o.first && !failed) failed = std::move(o);
  }
  if (!failed && !cluster) failed = start_watching(options.target, std::move(watching), sentinel);
  if (failed) {
    shutdown();
    throw error(failed->first, failed->second);
  }
}

// One server: refuse what cannot take lock writes (a cluster node, a replica), learn its replicas
// and whether it keeps an append-only file, and start following it (master_watch.hpp).
std::optional<std::pair<std::error_code, std::string>> client_core::start_watching(
    const net::endpoint& server, master_watch_options watching, bool sentinel) {
  std::promise<std::pair<std::error_code, resp::reply>> info;
  executor_->run("", resp::request{"INFO"}, [&info](std::error_code ec, resp::reply r) {
    info.set_value({ec, std::move(r)});
  });
  auto [ec, r] = info.get_future().get();
  if (ec) return std::pair{ec, "INFO on " + server.address() + " failed: " + r.str};
  if (info_field(r.str, "cluster_enabled") == "1") {
    return std::pair{make_error_code(errc::invalid_argument),
                     server.address() +
                         " is a node of a Redis Cluster: connect with redis-cluster://" +
                         server.address()};
  }
  if (info_field(r.str, "role") == "slave") {
    return std::pair{make_error_code(errc::invalid_argument),
                     server.address() + " is a replica (of " +
                         std::string(info_field(r.str, "master_host")) + ":" +
                         std::string(info_field(r.str, "master_port")) +
                         "), which takes no lock writes: connect to its master, or through "
                         "Sentinel with redis-sentinel://"};
  }
  const std::string run_id(info_field(r.str, "run_id"));
  server_id_ = run_id.empty() ? "address:" + server.address() : "run_id:" + run_id;
  // Sentinel's count stands: a master's own may include replicas Sentinel sees as down. A list
  // in the URL stands too.
  if (!sentinel && !watching.listed_replicas) watching.sync.known_replicas = online_replicas(r.str);
  watching.aof = settings_.replica_sync_aof && info_field(r.str, "aof_enabled") == "1";
  watching.on_moved = [this](const topology::node& to) {
    net::endpoint where = push_connection_->target();
    where.host = to.host;
    where.port = to.port;
    push_connection_->retarget(std::move(where));
    // A release on the new master before our subscriber is back there would go unheard: every
    // waiter tries again now (and once more when its channel is resubscribed).
    waiters_->wake_everyone();
    // A hold the old master granted but never passed on is gone on the new one: renewing now
    // tells its holder within a round trip, not at the next tick (up to a third of the lease).
    watchdog_->renew_now();
  };
  const auto master = topology::node{server.host, server.port};
  std::promise<void> started;
  asio::post(io_, [&] {
    watch_ = std::make_unique<master_watch>(io_, *executor_, std::move(watching), master);
    watch_->start();
    started.set_value();
  });
  started.get_future().get();
  return std::nullopt;
}

exec::executor_options client_core::executor_options(replica_sync_mode sync) {
  exec::executor_options o;
  o.command_timeout = settings_.command_timeout;
  o.sync_mode = sync;
  o.sync_timeout = settings_.replica_sync_timeout;
  o.sync_attempts = settings_.replica_sync_attempts;
  // One server: the master watch looks for a new master (a cluster refreshes its map itself).
  o.on_trouble = [this] {
    if (watch_) watch_->trouble();
  };
  o.log = settings_.log;
  o.observer = settings_.observer.get();
  return o;
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
  sweeper_->hurry();  // the latches waiting for company leave now, inside the drain
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
  if (watch_) watch_->close();
  executor_->close();
  blocking_->close();
  if (subscriber_) subscriber_->close();
  if (subscribers_) subscribers_->close();
  // Posted after the completions that closing queued, so they run before the loop stops.
  asio::post(io_, [this] { io_.stop(); });
}

std::string client_core::key_of(std::string_view name) const {
  return settings_.name_mapper ? settings_.name_mapper(name) : std::string(name);
}

void client_core::tell_refusals(pubsub::subscriber& s) {
  s.on_refused([this, at = s.connection().target().address()](const std::string& text) {
    log(log_level::error,
        at + ": " + text + " (waiters fall back to their timers; README, least privilege)");
  });
  if (auto* o = settings_.observer.get()) {
    s.on_each_refusal([o](const std::string& channel, const std::string& text) {
      o->on_subscription_refused({.channel = channel, .detail = text});
    });
  }
}

asio::io_context& io_of(client_core& core) { return core.io(); }

}  // namespace relock::detail
