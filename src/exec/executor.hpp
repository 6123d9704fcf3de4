// SPDX-License-Identifier: Apache-2.0
// CommandExecutor: runs commands and scripts on the right connection, from any thread.
//
// Callers on any thread hand work over; it runs on the I/O thread, where every callback is
// called. Scripts go by EVALSHA and are loaded on NOSCRIPT; what else may be retried is
// decided only by retry_policy.
//
// Every request, script or plain command, takes one path: the router names its node (the one
// server, or the cluster master of its key's slot), the node's pool picks a connection, and the
// retry policy judges the answer: NOSCRIPT loads the script, MOVED updates the map and goes to
// the slot's new owner, ASK goes once to the target behind ASKING, TRYAGAIN / CLUSTERDOWN /
// LOADING wait and go again, all within the request's deadline. None of those ran the command,
// so following them is always safe; a written request whose connection failed goes again only
// when idempotent.
//
// Commands go over a small pool of connections per node. One would make client and server take
// turns (a batch out, a batch back, the next batch forms only then); with several, one
// connection's replies are handled while the server works on another's. A request goes to the
// connection that still carries a request for its key (so a key's commands keep their order,
// even behind one that timed out), else to the least busy ready one, the first on ties. In a
// cluster, a node learnt from a MOVED or a refresh gets its pool when first needed, and the map
// is refreshed (CLUSTER SHARDS) after a redirect or a connection failure, and every 10 s.
//
// Requests follow their slot (issue #30): while a request waits on a connection that is down,
// the map is refreshed every router::min_gap, and each refresh sends the requests never
// written whose slot now lives on another node (a replica promoted in place of a dead master)
// there at once, as slot_follow.hpp decides, instead of leaving them to wait for their
// deadline on a node that will not come back.
//
// Replica sync (data-layout §1): while sync_with() names replicas, every script that writes is
// followed in the same request, on the same connection, by WAIT (WAITAOF when asked): WAIT
// counts only its own connection's writes. The script's reply is judged as usual; then, when no
// replica acknowledged, a request that is safe to repeat waits again on that connection, up to
// the attempts setting, and any other completes with errc::no_synced_replicas and the script's
// reply, so its caller can undo what it did (an acquire is rolled back). A write refused by a
// replica (READONLY, or WAIT refused on one) means the master moved: it goes again after a
// pause, and on_trouble tells whoever follows the master to look.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <relock/config.hpp>

#include <relock/detail/unique_function.hpp>
#include "exec/script.hpp"
#include "net/connection.hpp"
#include "resp/bulk_strings.hpp"
#include "resp/reply.hpp"
#include "resp/request.hpp"
#include "topology/router.hpp"

namespace relock::exec {

// On failure: the error code, and a reply whose text explains it (the server's own text for
// error replies).
using result_callback = detail::unique_function<void(std::error_code, resp::reply)>;

// The error code for an error reply: WRONGTYPE, NOAUTH... get their own, the rest server_error.
std::error_code classify(const resp::reply& error_reply);

struct executor_options {
  std::chrono::milliseconds command_timeout{3'000};
  // Replica sync: in a cluster, WAIT names the online replicas of the key's master as the map
  // has them, as `sync_mode` sizes it (one server: sync_with() says). How long each WAIT waits,
  // and how many times a request that is safe to repeat waits before it fails with
  // errc::no_synced_replicas.
  replica_sync_mode sync_mode = replica_sync_mode::auto_detect;
  std::chrono::milliseconds sync_timeout{1'000};
  unsigned sync_attempts = 3;
  // One server: something suggests the master moved (a lost connection, a write a replica
  // refused). Called on the I/O thread.
  std::function<void()> on_trouble{};
  std::function<void(log_level, std::string_view)> log{};
  relock::observer* observer = nullptr;  // the client's, which outlives the executor
};

// How one script call may be sent.
struct eval_options {
  // Renewals and latch-protected releases may be resent after a lost connection; others never.
  bool idempotent = false;
  // Overrides the command timeout when above zero.
  std::chrono::milliseconds timeout{0};
  // False sends a writing script without WAIT (relock's own cleanups, which must not wait on
  // the replica that refused the write).
  bool synced = true;
  // Called (I/O thread) each time a copy already written goes again after its connection
  // failed: the first copy may still reach the server later (a healed partition delivers held
  // bytes), so whatever guards against a second run must outlive it.
  detail::unique_function<void()> on_resent{};
};

using pool = std::vector<std::shared_ptr<net::connection>>;
// Makes (and starts) the connections of a node first met in a cluster.
using pool_factory = std::function<pool(const topology::node&)>;

class executor {
 public:
  // One server.
  executor(asio::io_context& io, pool connections, executor_options options);
  // A cluster: the router with its first map, a pool for each master it names, and how to make
  // the pool of a node met later.
  executor(asio::io_context& io, topology::router router,
           std::vector<std::pair<topology::node, pool>> pools, pool_factory make_pool,
           executor_options options);

  // One command, routed by `key` (the first key it touches; empty for keyless commands).
  // `idempotent` commands may be resent after a lost connection.
  void run(std::string_view key, resp::request request, result_callback callback,
           bool idempotent = false);

  // One command to one node (a master this executor knows, or a cluster node met later): INFO,
  // CONFIG GET, SCAN and the like, for diagnostics. Never resent after a lost connection.
  void run_at(const topology::node& at, resp::request request, result_callback callback);

  // EVALSHA with the script's local SHA; routed by keys[0].
  void eval(const script& s, resp::bulk_strings keys, resp::bulk_strings args,
            result_callback callback, eval_options options = {});

  bool on_io_thread() const { return io_.get_executor().running_in_this_thread(); }
  asio::io_context& io() { return io_; }
  std::chrono::milliseconds command_timeout() const { return options_.command_timeout; }

  // Replies that can still arrive, over the whole pool (I/O thread only): what busy_poll
  // waits for. Requests queued on a connection that is down are not counted.
  std::size_t awaiting_replies() const;

  // Requests written or queued on a connection that is up (I/O thread only): what shutdown
  // lets finish before it closes.
  std::size_t live_outstanding() const;

  // The connection a request for `key` would take now (I/O thread only).
  net::connection& route(std::string_view key);

  bool cluster() const { return router_.cluster(); }

  // Replica sync (I/O thread only): one server's writes are followed by WAIT for `replicas`
  // (0: none), as WAITAOF when `aof`.
  void sync_with(int replicas, bool aof);
  // The replicas a write of `key` waits for now (I/O thread only).
  int synced_replicas(std::string_view key) const;
  // Replicas that acknowledged the last synced write; -1 before the first.
  std::int64_t last_acknowledged() const { return last_acks_; }
  // One server: the master is `to` from now on; every connection leaves for it (I/O thread).
  void move_master(const topology::node& to);
  // The one server's node: the master now (I/O thread only).
  topology::node master() const { return pools_.front()->node; }
  // One server: a connection to it is up (I/O thread only).
  bool master_up() const;
  // Where `key` goes now; none when the cluster map has no master for its slot (I/O thread).
  std::optional<topology::node> node_for(std::string_view key) const {
    return router_.node_for(key);
  }
  // A MOVED met elsewhere (a sharded subscription) (I/O thread only).
  void learn_moved(std::uint16_t slot, topology::node to) { router_.moved(slot, std::move(to)); }
  // The same from an error reply met on a connection of its own (a blocking take): a MOVED
  // updates the map, its host defaulting to `from_host` when the reply names none (I/O thread).
  void learn_redirect(const resp::reply& r, const std::string& from_host);
  // The cluster's masters as the map has them now (I/O thread only).
  std::vector<topology::node> masters() const { return router_.map().masters(); }
  // The node that serves `key` now, as host:port (I/O thread only).
  std::string node_of(std::string_view key) const;

  // Closes every connection: whatever is outstanding, or waiting to be resent, fails with
  // errc::cancelled; later requests fail the same way (I/O thread only).
  void close();

 private:
  struct call;
  struct node_pool {
    topology::node node;
    pool connections;
  };
  void start(std::shared_ptr<call> c);
  void send(std::shared_ptr<call> c);
  void on_reply(std::shared_ptr<call> c, node_pool& from, std::error_code ec,
                net::reply_span replies);
  void retry_later(std::shared_ptr<call> c);
  void judge_sync(std::shared_ptr<call> c, resp::reply script_reply, resp::reply wait_reply);
  void complete(call& c, std::error_code ec, resp::reply r);
  void trouble();
  resp::request wait_request(int replicas) const;
  node_pool& pool_for(const call& c);
  node_pool& pool_of(const topology::node& n);
  const std::shared_ptr<net::connection>& pick(node_pool& p, std::size_t key_hash);
  void refresh_if_due();
  // A request waits on a connection that is down: keep the map fresh until none does.
  void watch_stranded();
  bool stranded() const;
  // After a refresh: requests never written move to where their slot lives now.
  void follow_slots();
  template <class F>
  void on_io(F&& f);

  asio::io_context& io_;
  topology::router router_;
  std::vector<std::unique_ptr<node_pool>> pools_;  // the first: the one server, or a seed master
  pool_factory make_pool_;
  executor_options options_;
  std::unordered_set<std::shared_ptr<call>> delayed_;  // waiting to be resent
  asio::steady_timer stranded_timer_;
  bool watching_stranded_ = false;
  bool refreshing_ = false;
  bool closed_ = false;
  int wait_replicas_ = 0;
  bool wait_aof_ = false;
  bool wait_unsupported_ = false;  // the server refused WAIT as unknown: warned once, not sent
  std::int64_t last_acks_ = -1;
};

}  // namespace relock::exec
