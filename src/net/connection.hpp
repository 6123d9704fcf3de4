// SPDX-License-Identifier: Apache-2.0
// One socket to one Redis server, shared by many callers: requests are pipelined, written
// together, and answered in FIFO order.
//
// Lives on one io_context thread: every member must be called there (the executor posts).
// A lost connection fails every written request with errc::connection and never resends it
// (acquire and release are not idempotent); requests not yet written wait for the reconnect
// until their own deadline. Reconnects use capped exponential backoff with jitter.
//
// Push mode is for a subscriber connection: after the handshake every reply is handed to the
// push handler, and requests expect no reply of their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <relock/config.hpp>

#include <relock/detail/unique_function.hpp>
#include "containers/fifo.hpp"
#include "containers/spare_nodes.hpp"
#include "net/backoff.hpp"
#include "net/endpoint.hpp"
#include "net/plain_probe.hpp"
#include "net/tls_context.hpp"
#include "resp/reader.hpp"
#include "resp/request.hpp"

namespace relock::net {

using clock = std::chrono::steady_clock;

// What the callback of a request taken back by connection::withdraw hears: it was never
// written, so its sender may send it anywhere (a code of its own, met nowhere else).
std::error_code withdrawn();

// A request's replies, lent to its callback for the call (which may move them out). On failure
// they are one error reply whose text explains it for humans.
using reply_span = std::span<resp::reply>;
using reply_callback = detail::unique_function<void(std::error_code, reply_span)>;
using log_function = std::function<void(log_level, std::string_view)>;

struct connection_options {
  endpoint target;
  std::string client_name;  // CLIENT SETNAME, so operators can see who we are
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds reconnect_min_delay{50};
  std::chrono::milliseconds reconnect_max_delay{2'000};
  bool push_mode = false;
  log_function log;
  // TLS when `tls.context` is set: every connection of a client shares its context.
  tls_client tls{};
  // Where each reconnect goes, when set (a cluster's subscriber moves on to a node that is up);
  // nullopt or unset: the same target again.
  std::function<std::optional<endpoint>()> next_target;
  // Told of a loss and of the recovery from it (I/O thread); null: nobody.
  std::shared_ptr<relock::observer> observer;
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  static std::shared_ptr<connection> create(asio::io_context& io, connection_options options);
  ~connection();

  // Begins connecting. `first_result` hears how the first attempt ended (after the handshake);
  // later attempts go on in the background until close().
  void start(detail::unique_function<void(std::error_code, std::string)> first_result = {});

  // `key_hash` (0: none) names the key the request touches: see carries(). `route` is the
  // sender's own tag for where the request belongs (0: none), which withdraw() hands back.
  void send(resp::request request, clock::time_point deadline, reply_callback callback,
            std::size_t key_hash = 0, std::uint32_t route = 0);

  // Takes back the requests still queued (never written) whose route `leaves` picks: each
  // callback hears withdrawn(), in queue order, after the walk. Written requests stay, since the
  // server may run them (their sender learns their fate as usual). Returns how many left.
  std::size_t withdraw(const std::function<bool(std::uint32_t route)>& leaves);

  // Fails everything outstanding with errc::cancelled and stops reconnecting.
  void close();

  // From now on connect to `where` (a new master): a live socket to another server is dropped
  // as a lost connection would be (written requests fail with errc::connection, queued ones
  // wait), and the reconnect goes there.
  void retarget(endpoint where);

  bool ready() const { return state_ == state::ready; }
  const endpoint& target() const { return options_.target; }
  std::size_t outstanding() const { return queued_.size() + written_.size(); }
  // Replies that can still arrive: requests written on a live socket.
  std::size_t awaiting_replies() const { return state_ == state::ready ? written_.size() : 0; }
  // True while a request for this key is queued here or written and unanswered, even one whose
  // caller already gave up on it (timeout): the server may still run it, so whatever follows
  // for the same key must queue behind it on this socket.
  bool carries(std::size_t key_hash) const { return unanswered_keys_.contains(key_hash); }

  void on_push(std::function<void(resp::reply&)> handler) { on_push_ = std::move(handler); }
  void on_ready(std::function<void()> handler) { on_ready_ = std::move(handler); }
  void on_down(std::function<void()> handler) { on_down_ = std::move(handler); }

 private:
  enum class state { idle, connecting, ready, waiting_to_retry, closed };

  struct pending {
    std::string payload;
    std::size_t expected = 0;  // replies still to come
    clock::time_point deadline;
    reply_callback callback;           // empty once completed (e.g. timed out after being written)
    std::vector<resp::reply> replies;  // of a request of several commands, until the last
    std::size_t key_hash = 0;
    std::uint32_t route = 0;
  };

  connection(asio::io_context& io, connection_options options);

  void connect();
  void on_connected();
  void start_tls();
  void probe_if_unanswered(clock::duration connect_took);
  void stop_probe();
  std::string first_answer_refusal(
      const std::shared_ptr<asio::ssl::stream<asio::ip::tcp::socket>>& stream,
      const std::error_code& ec, const char* first, std::size_t n) const;
  asio::ip::tcp::socket& lowest() { return tls_ ? tls_->next_layer() : socket_; }
  void on_handshake(reply_span replies);
  void fail(std::error_code ec, const std::string& why);
  void schedule_reconnect();
  void flush();
  void write_buffered();  // writes write_buffer_, then flushes what queued meanwhile
  void read();
  void dispatch(resp::reply reply);
  void arm_deadline(clock::time_point when);
  void expire_deadlines();
  void complete(pending& p, std::error_code ec, reply_span replies);
  void complete_failed(pending& p, std::error_code ec, std::string why);
  void count_key(std::size_t key_hash);
  void forget_key(pending& p);
  void log(log_level level, const std::string& text) const;

  asio::io_context& io_;
  connection_options options_;
  asio::ip::tcp::socket socket_;
  // With TLS, the stream over this attempt's socket (a new one per attempt: an SSL session is
  // not reused after a failure). Shared with the handlers of its operations, which may still
  // be queued when the next attempt begins.
  std::shared_ptr<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
  asio::ip::tcp::resolver resolver_;
  asio::steady_timer connect_timer_;
  asio::steady_timer retry_timer_;
  asio::steady_timer deadline_timer_;
  // While a TLS handshake goes unanswered: when to ask the port in plain RESP, and the probe.
  asio::steady_timer probe_timer_;
  std::shared_ptr<plain_probe> probe_;
  clock::time_point deadline_armed_for_ = clock::time_point::max();
  backoff backoff_;
  state state_ = state::idle;
  std::optional<clock::time_point> lost_at_;  // since a ready connection failed
  unsigned epoch_ = 0;  // bumps with every socket, so callbacks of an old socket do nothing
  bool writing_ = false;
  bool heard_ = false;                 // this attempt's socket has received a byte
  containers::fifo<pending> queued_;   // not yet written
  containers::fifo<pending> written_;  // written, awaiting replies, in order
  using key_counts = std::unordered_map<std::size_t, unsigned>;
  key_counts unanswered_keys_;  // key hash -> requests
  containers::spare_nodes<key_counts> spare_keys_;
  std::string write_buffer_;
  std::vector<char> read_buffer_ = std::vector<char>(16 * 1024);
  std::unique_ptr<resp::reader> reader_;
  detail::unique_function<void(std::error_code, std::string)> first_result_;
  std::function<void(resp::reply&)> on_push_;
  std::function<void()> on_ready_;
  std::function<void()> on_down_;
};

}  // namespace relock::net
