// SPDX-License-Identifier: Apache-2.0
#include "exec/executor.hpp"

#include <algorithm>
#include <functional>

#include <asio/dispatch.hpp>
#include <asio/post.hpp>
#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "containers/block_cache.hpp"
#include "exec/retry_policy.hpp"
#include "exec/slot_follow.hpp"
#include "topology/redirect.hpp"
#include "topology/replication.hpp"

namespace relock::exec {
namespace {

// How long to wait before resending a command the server said it could not run yet.
constexpr std::chrono::milliseconds busy_server_delay{100};

// 0 means "no key" to a connection.
std::size_t key_hash_of(std::string_view key) {
  if (key.empty()) return 0;
  const std::size_t h = std::hash<std::string_view>{}(key);
  return h == 0 ? 1 : h;
}

}  // namespace

std::error_code classify(const resp::reply& r) {
  const std::string_view code = r.error_code();
  if (code == "WRONGTYPE") return errc::wrong_type;
  if (code == "NOAUTH" || code == "WRONGPASS") return errc::auth_failed;
  // The user's ACL rules leave out a command, a key or a channel (README, least privilege);
  // inside a script Redis 7.0 says so with ERR and the first words, Valkey 9 with the second.
  if (code == "NOPERM" || r.str.find("The user executing the script can't") != std::string::npos ||
      r.str.find("ACL failure in script") != std::string::npos) {
    return errc::no_permission;
  }
  // min-replicas-to-write: the master has too few replicas to take a write.
  if (code == "NOREPLICAS") return errc::no_synced_replicas;
  return errc::server_error;
}

// One request on its way: a script (EVALSHA, SCRIPT LOAD first after a NOSCRIPT) or a plain
// command, with what its earlier attempts taught.
struct executor::call {
  std::string key;  // routes a plain command; a script goes by keys[0], not copied here
  // The key that routes this call: the node, the connection, the slot it follows.
  std::string_view route_key() const {
    return code != nullptr && !keys.empty() ? keys.front() : std::string_view(key);
  }
  const script* code = nullptr;
  resp::bulk_strings keys;
  resp::bulk_strings args;
  resp::request plain;
  result_callback callback;
  net::clock::time_point deadline;
  bool reloaded = false;
  bool idempotent = false;
  int redirects = 0;
  std::optional<topology::node> ask;  // the next attempt goes there, behind ASKING
  std::optional<topology::node> at;   // run_at: this node, whatever the key's slot
  std::unique_ptr<asio::steady_timer> delay;
  bool synced = true;                         // a write followed by WAIT while replica sync is on
  detail::unique_function<void()> on_resent;  // a written copy's connection failed: it goes again
  int waited_for = 0;                // this attempt's WAIT names so many replicas; 0: no WAIT
  net::clock::time_point sent_at{};  // when this attempt went out (a replica-sync event's wait)
  unsigned sync_waits = 0;           // WAITs answered without an acknowledgement
  bool deadline_extended = false;
  std::shared_ptr<net::connection> via;  // where the last attempt went: a WAIT again goes there
};

executor::executor(asio::io_context& io, pool connections, executor_options options)
    : executor(io,
               topology::router(topology::node{connections.front()->target().host,
                                               connections.front()->target().port}),
               {}, {}, options) {
  pools_.push_back(std::make_unique<node_pool>(node_pool{
      topology::node{connections.front()->target().host, connections.front()->target().port},
      std::move(connections)}));
}

executor::executor(asio::io_context& io, topology::router router,
                   std::vector<std::pair<topology::node, pool>> pools, pool_factory make_pool,
                   executor_options options)
    : io_(io),
      router_(std::move(router)),
      make_pool_(std::move(make_pool)),
      options_(options),
      stranded_timer_(io) {
  for (auto& [n, connections] : pools) {
    pools_.push_back(std::make_unique<node_pool>(node_pool{n, std::move(connections)}));
  }
}

template <class F>
void executor::on_io(F&& f) {
  // Posted from other threads; run at once when already on the I/O thread.
  asio::dispatch(io_, std::forward<F>(f));
}

std::size_t executor::awaiting_replies() const {
  std::size_t n = 0;
  for (const auto& p : pools_) {
    for (const auto& c : p->connections) n += c->awaiting_replies();
  }
  return n;
}

std::size_t executor::live_outstanding() const {
  std::size_t n = 0;
  for (const auto& p : pools_) {
    for (const auto& c : p->connections) {
      if (c->ready()) n += c->outstanding();
    }
  }
  return n;
}

void executor::close() {
  closed_ = true;
  for (auto& p : pools_) {
    for (auto& c : p->connections) c->close();
  }
  // Their timers' handlers resend into the closed pool, which fails them with cancelled.
  for (const auto& c : delayed_) c->delay->cancel();
  stranded_timer_.cancel();
}

executor::node_pool& executor::pool_of(const topology::node& n) {
  for (auto& p : pools_) {
    if (p->node == n) return *p;
  }
  if (!make_pool_ || closed_) return *pools_.front();
  pools_.push_back(std::make_unique<node_pool>(node_pool{n, make_pool_(n)}));
  return *pools_.back();
}

executor::node_pool& executor::pool_for(const call& c) {
  if (c.at) return pool_of(*c.at);
  if (c.ask) return pool_of(*c.ask);
  auto n = router_.node_for(c.route_key());
  if (n) return pool_of(*n);
  // A slot without a master (a failover under way) goes to any node that is up: its answer
  // (MOVED, CLUSTERDOWN) decides.
  for (auto& p : pools_) {
    for (auto& conn : p->connections) {
      if (conn->ready()) return *p;
    }
  }
  return *pools_.front();
}

const std::shared_ptr<net::connection>& executor::pick(node_pool& p, std::size_t key_hash) {
  if (p.connections.size() > 1 && key_hash != 0) {
    for (const auto& c : p.connections) {
      if (c->carries(key_hash)) return c;
    }
  }
  const std::shared_ptr<net::connection>* best = &p.connections.front();
  for (const auto& c : p.connections) {
    if (c->ready() != (*best)->ready()) {
      if (c->ready()) best = &c;
    } else if (c->outstanding() < (*best)->outstanding()) {
      best = &c;
    }
  }
  return *best;
}

net::connection& executor::route(std::string_view key) {
  call probe;
  probe.key = std::string(key);
  return *pick(pool_for(probe), key_hash_of(key));
}

bool executor::master_up() const {
  const auto& connections = pools_.front()->connections;
  return std::any_of(connections.begin(), connections.end(),
                     [](const auto& c) { return c->ready(); });
}

int executor::synced_replicas(std::string_view key) const {
  if (!router_.cluster()) return wait_replicas_;
  const auto replicas = router_.map().replicas_of(topology::slot_of(key)).size();
  return topology::replication{options_.sync_mode, static_cast<int>(replicas)}.replicas_to_wait();
}

void executor::sync_with(int replicas, bool aof) {
  wait_replicas_ = replicas;
  wait_aof_ = aof;
}

void executor::move_master(const topology::node& to) {
  node_pool& p = *pools_.front();
  if (p.node == to) return;
  if (options_.observer != nullptr) {
    const std::string from_address = p.node.address(), to_address = to.address();
    options_.observer->on_topology(
        {.change = topology_change::new_master, .from = from_address, .to = to_address});
  }
  p.node = to;
  router_.master_moved(to);
  for (auto& c : p.connections) {
    net::endpoint where = c->target();
    where.host = to.host;
    where.port = to.port;
    c->retarget(std::move(where));
  }
}

resp::request executor::wait_request(int replicas) const {
  const std::string n = std::to_string(replicas);
  const std::string timeout = std::to_string(options_.sync_timeout.count());
  // WAITAOF numlocal numreplicas timeout: the master's own AOF too.
  if (wait_aof_) return resp::request{"WAITAOF", "1", n, timeout};
  return resp::request{"WAIT", n, timeout};
}

void executor::trouble() {
  if (!router_.cluster() && options_.on_trouble) options_.on_trouble();
}

void executor::complete(call& c, std::error_code ec, resp::reply r) {
  if (!ec && r.is_error()) ec = classify(r);
  std::exchange(c.callback, {})(ec, std::move(r));
}

void executor::learn_redirect(const resp::reply& r, const std::string& from_host) {
  auto redirect = topology::parse_redirect(r.str);
  if (!redirect || redirect->kind != topology::redirect::kind::moved || !router_.cluster()) return;
  const bool unnamed = redirect->host.empty() || redirect->host == "?";
  router_.moved(redirect->slot,
                topology::node{unnamed ? from_host : redirect->host, redirect->port});
}

std::string executor::node_of(std::string_view key) const {
  auto n = router_.node_for(key);
  return n ? n->address() : pools_.front()->node.address();
}

void executor::run(std::string_view key, resp::request request, result_callback callback,
                   bool idempotent) {
  auto c = containers::make_cached<call>();
  c->key = std::string(key);
  c->plain = std::move(request);
  c->callback = std::move(callback);
  c->idempotent = idempotent;
  c->deadline = net::clock::now() + options_.command_timeout;
  on_io([this, c = std::move(c)]() mutable { send(std::move(c)); });
}

void executor::run_at(const topology::node& at, resp::request request, result_callback callback) {
  auto c = containers::make_cached<call>();
  c->at = at;
  c->plain = std::move(request);
  c->callback = std::move(callback);
  c->deadline = net::clock::now() + options_.command_timeout;
  on_io([this, c = std::move(c)]() mutable { send(std::move(c)); });
}

void executor::eval(const script& s, resp::bulk_strings keys, resp::bulk_strings args,
                    result_callback callback, eval_options options) {
  auto c = containers::make_cached<call>();
  c->synced = options.synced;
  c->on_resent = std::move(options.on_resent);
  c->code = &s;
  c->keys = std::move(keys);
  c->args = std::move(args);
  c->callback = std::move(callback);
  c->idempotent = options.idempotent;
  c->deadline = net::clock::now() +
                (options.timeout.count() > 0 ? options.timeout : options_.command_timeout);
  on_io([this, c = std::move(c)]() mutable { send(std::move(c)); });
}

void executor::send(std::shared_ptr<call> c) {
  refresh_if_due();
  auto request = resp::request::reusing_spare();  // its buffer comes back once written
  // ASKING lets the next command, and only it, run on a slot being imported: so it goes after
  // a SCRIPT LOAD, right before the command.
  if (c->code != nullptr && c->reloaded) request.push({"SCRIPT", "LOAD", c->code->source});
  if (c->ask) request.push({"ASKING"});
  if (c->code == nullptr) {
    request.append(c->plain);
  } else {
    const std::string numkeys = std::to_string(c->keys.size());
    request.push({"EVALSHA", c->code->sha, numkeys}, c->keys, c->args);
  }
  // Right behind the write, on its connection: WAIT counts that connection's writes only.
  c->waited_for = c->code != nullptr && c->code->writes && c->synced && !wait_unsupported_
                      ? synced_replicas(c->route_key())
                      : 0;
  if (c->waited_for > 0) {
    c->sent_at = net::clock::now();
    request.append(wait_request(c->waited_for));
    if (!std::exchange(c->deadline_extended, true)) {
      c->deadline += options_.sync_timeout * (c->idempotent ? options_.sync_attempts : 1U);
    }
  }
  node_pool& to = pool_for(*c);
  const std::size_t key_hash = key_hash_of(c->route_key());
  c->via = pick(to, key_hash);
  // In a cluster the request may follow its slot (follow_slots): tagged with it, plus one, as
  // 0 means "stays". One sent behind ASKING belongs to the node asked, whatever the map says.
  const std::uint32_t route = router_.cluster() && !c->ask && !c->at
                                  ? std::uint32_t{topology::slot_of(c->route_key())} + 1
                                  : 0;
  if (route != 0 && !c->via->ready()) watch_stranded();
  c->via->send(
      std::move(request), c->deadline,
      [this, c, &to](std::error_code ec, net::reply_span replies) mutable {
        on_reply(std::move(c), to, ec, replies);
      },
      key_hash, route);
}

void executor::on_reply(std::shared_ptr<call> c, node_pool& from, std::error_code ec,
                        net::reply_span replies) {
  // Taken back unwritten because its slot lives elsewhere now: no server has seen it.
  if (ec == net::withdrawn()) return send(std::move(c));
  std::optional<resp::reply> wait_reply;
  if (!ec && c->waited_for > 0 && replies.size() >= 2) {
    wait_reply = std::move(replies.back());
    replies = replies.first(replies.size() - 1);
  }
  resp::reply r = replies.empty() ? resp::reply{} : std::move(replies.back());
  const auto asked = std::exchange(c->ask, std::nullopt);
  // A node that dropped us or went silent may have failed over: the map may be stale, the
  // master may have moved.
  if (ec == make_error_code(errc::connection) || ec == make_error_code(errc::timeout)) {
    router_.suspect();
    trouble();
    if (router_.cluster()) watch_stranded();
  }
  // A replica refused the write: this is no longer the master.
  if (!ec && r.error_code() == "READONLY") trouble();
  attempt a;
  a.connection_failed = ec == make_error_code(errc::connection);
  a.written = true;  // a connection only fails requests it has written
  a.idempotent = c->idempotent;
  a.error_code = ec ? std::string_view() : r.error_code();
  a.script_reloaded = c->reloaded;
  a.redirects = c->redirects;
  a.time_left = net::clock::now() < c->deadline;
  auto step = decide(a);
  std::optional<topology::redirect> redirect;
  if (step == next_step::follow_moved || step == next_step::follow_ask) {
    redirect = topology::parse_redirect(r.str);
    // One server never redirects; a node that does is a cluster reached by a redis:// URL.
    if (!redirect || !router_.cluster()) step = next_step::complete;
  }
  switch (step) {
    case next_step::load_script_and_retry:
      c->reloaded = true;
      c->ask = asked;  // ASKING is good for one command: a resend needs it again
      send(std::move(c));
      break;
    case next_step::follow_moved:
    case next_step::follow_ask: {
      // An unknown endpoint ("" or "?") is the host we reached the cluster by.
      topology::node to{
          redirect->host.empty() || redirect->host == "?" ? from.node.host : redirect->host,
          redirect->port};
      ++c->redirects;
      if (step == next_step::follow_moved) {
        if (options_.observer != nullptr) {
          const std::string from_address = from.node.address(), to_address = to.address();
          options_.observer->on_topology({.change = topology_change::slot_moved,
                                          .from = from_address,
                                          .to = to_address,
                                          .slot = static_cast<int>(redirect->slot)});
        }
        router_.moved(redirect->slot, std::move(to));
      } else {
        c->ask = std::move(to);
      }
      send(std::move(c));
      break;
    }
    case next_step::retry_after_delay:
      if (closed_) {
        ec = errc::cancelled;
        r = resp::reply::make_error("the client has been destroyed");
        std::exchange(c->callback, {})(ec, std::move(r));
        break;
      }
      // A migrating slot sends a multi-key script through ASK to TRYAGAIN until it ends: the
      // deadline bounds that, not the redirect count.
      c->redirects = 0;
      if (a.connection_failed && c->on_resent) c->on_resent();
      retry_later(std::move(c));
      break;
    case next_step::time_out:
      complete(*c, errc::timeout,
               resp::reply::make_error("no reply from " + from.node.address() +
                                       " in time: its last was " + r.str));
      break;
    case next_step::complete:
      if (!ec && !r.is_error() && wait_reply) {
        judge_sync(std::move(c), std::move(r), std::move(*wait_reply));
        break;
      }
      complete(*c, ec, std::move(r));
      break;
  }
  refresh_if_due();
}

void executor::judge_sync(std::shared_ptr<call> c, resp::reply script_reply,
                          resp::reply wait_reply) {
  if (wait_reply.is_error()) {
    if (wait_reply.str.find("replica") != std::string::npos) {
      // "ERR WAIT cannot be used with replica instances": the script ran on a node that has
      // become a replica, and wrote nothing there (a write would have been refused). The master
      // moved: go again once it is found.
      trouble();
      c->redirects = 0;
      return retry_later(std::move(c));
    }
    if (wait_aof_) {
      // WAITAOF is Redis 7.2's: an older master falls back to WAIT, said once. The write went
      // unacknowledged, so it counts as such (an acquire is rolled back and tried again).
      wait_aof_ = false;
      if (options_.log) {
        options_.log(log_level::warning, "the server refused WAITAOF (" + wait_reply.str +
                                             "): lock writes wait with WAIT instead");
      }
      return complete(*c, errc::no_synced_replicas, std::move(script_reply));
    }
    // A server (or proxy) without WAIT: said once, loudly, and the writes go on unsynced.
    if (!std::exchange(wait_unsupported_, true) && options_.log) {
      options_.log(log_level::warning,
                   "the server refused WAIT (" + wait_reply.str +
                       "): lock writes are NOT synced with replicas from now on");
    }
    return complete(*c, {}, std::move(script_reply));
  }
  // WAIT answers the count; WAITAOF [local fsyncs, replica fsyncs].
  const std::int64_t acknowledged =
      wait_reply.is_array() ? (wait_reply.elements.size() == 2 ? wait_reply.elements[1].integer : 0)
                            : wait_reply.integer;
  last_acks_ = acknowledged;
  const bool synced = topology::replication::synced(acknowledged);
  if (options_.observer != nullptr) {
    options_.observer->on_replica_sync(
        {.key = c->route_key(),
         .wanted = c->waited_for,
         .acknowledged = acknowledged,
         .waited =
             std::chrono::duration_cast<std::chrono::microseconds>(net::clock::now() - c->sent_at),
         .error = synced ? std::error_code() : make_error_code(errc::no_synced_replicas)});
  }
  if (synced) return complete(*c, {}, std::move(script_reply));
  // Safe to repeat: wait again for the same write, on its connection, while it is up.
  if (c->idempotent && ++c->sync_waits < options_.sync_attempts && c->via && c->via->ready() &&
      net::clock::now() < c->deadline && !closed_) {
    auto via = c->via;
    via->send(
        wait_request(c->waited_for), c->deadline,
        [this, c, held = std::move(script_reply)](std::error_code ec,
                                                  net::reply_span replies) mutable {
          if (ec || replies.empty()) return complete(*c, errc::no_synced_replicas, std::move(held));
          judge_sync(std::move(c), std::move(held), std::move(replies.back()));
        },
        key_hash_of(c->route_key()));
    return;
  }
  complete(*c, errc::no_synced_replicas, std::move(script_reply));
}

void executor::retry_later(std::shared_ptr<call> c) {
  c->delay = std::make_unique<asio::steady_timer>(io_, busy_server_delay);
  delayed_.insert(c);
  c->delay->async_wait([this, c](std::error_code) mutable {
    delayed_.erase(c);
    send(std::move(c));
  });
}

void executor::refresh_if_due() {
  // On every send and reply: one server never refreshes, so it does not even read the clock.
  if (!router_.cluster()) return;
  const auto now = std::chrono::steady_clock::now();
  if (refreshing_ || closed_ || !router_.refresh_due(now)) return;
  // Asked of any node that is up: every node knows the whole map.
  node_pool* from = nullptr;
  net::connection* via = nullptr;
  for (auto& p : pools_) {
    for (auto& c : p->connections) {
      if (c->ready()) {
        from = p.get();
        via = c.get();
        break;
      }
    }
    if (via != nullptr) break;
  }
  if (via == nullptr) return;
  refreshing_ = true;
  router_.refreshing(now);
  resp::request shards{"CLUSTER", "SHARDS"};
  via->send(std::move(shards), net::clock::now() + options_.command_timeout,
            [this, host = from->node.host](std::error_code ec, net::reply_span replies) {
              refreshing_ = false;
              if (ec || replies.empty()) return;
              std::string why;
              auto map = topology::slot_map::from_shards(replies.back(), host, &why);
              if (!map) return;
              router_.refreshed(std::move(*map), std::chrono::steady_clock::now());
              follow_slots();
            });
}

bool executor::stranded() const {
  for (const auto& p : pools_) {
    for (const auto& c : p->connections) {
      if (!c->ready() && c->outstanding() > 0) return true;
    }
  }
  return false;
}

void executor::watch_stranded() {
  if (watching_stranded_ || closed_) return;
  watching_stranded_ = true;
  // Traffic alone refreshes the map, and a request waiting on a dead node makes none: a timer
  // looks while any does, so a promotion is seen within a gap of becoming visible.
  stranded_timer_.expires_after(topology::router::min_gap);
  stranded_timer_.async_wait([this](std::error_code ec) {
    watching_stranded_ = false;
    if (ec || closed_ || !stranded()) return;
    router_.suspect();
    refresh_if_due();
    watch_stranded();
  });
}

void executor::follow_slots() {
  // Copied first: a request sent on may make the pool of a node met for the first time.
  std::vector<std::pair<topology::node, std::shared_ptr<net::connection>>> down;
  for (const auto& p : pools_) {
    for (const auto& c : p->connections) {
      if (!c->ready() && c->outstanding() > 0) down.emplace_back(p->node, c);
    }
  }
  for (const auto& [at, c] : down) {
    const bool up = c->ready();
    c->withdraw([this, up, &node = at](std::uint32_t route) {
      const auto* owner = router_.map().master_of(static_cast<std::uint16_t>(route - 1));
      const slot_owner now = !owner           ? slot_owner::none
                             : *owner == node ? slot_owner::same
                                              : slot_owner::other;
      return place({.written = false, .connection_up = up, .owner = now}) == placement::move_now;
    });
  }
}

}  // namespace relock::exec
