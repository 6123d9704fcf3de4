// SPDX-License-Identifier: Apache-2.0
#include "net/connection.hpp"

#include <fcntl.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <asio/connect.hpp>
#include <asio/post.hpp>
#include <asio/ssl/error.hpp>
#include <asio/write.hpp>
#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "net/tls_refusal.hpp"
#include "resp/spare_payloads.hpp"

namespace relock::net {
namespace {

// A callback told why its request failed: one error reply.
void call_failed(reply_callback& callback, std::error_code ec, std::string why) {
  resp::reply because = resp::reply::make_error(std::move(why));
  callback(ec, reply_span(&because, 1));
}

// One code, so the executor can tell a request taken back unwritten from any failure.
class withdrawn_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "relock.withdrawn"; }
  std::string message(int) const override { return "taken back unwritten"; }
};

}  // namespace

std::error_code withdrawn() {
  static const withdrawn_category category;
  return {1, category};
}

std::shared_ptr<connection> connection::create(asio::io_context& io, connection_options options) {
  return std::shared_ptr<connection>(new connection(io, std::move(options)));
}

connection::connection(asio::io_context& io, connection_options options)
    : io_(io),
      options_(std::move(options)),
      socket_(io),
      resolver_(io),
      connect_timer_(io),
      retry_timer_(io),
      deadline_timer_(io),
      probe_timer_(io),
      backoff_(options_.reconnect_min_delay, options_.reconnect_max_delay) {}

connection::~connection() = default;

void connection::log(log_level level, const std::string& text) const {
  if (options_.log) options_.log(level, text);
}

void connection::start(detail::unique_function<void(std::error_code, std::string)> first_result) {
  first_result_ = std::move(first_result);
  connect();
}

void connection::connect() {
  state_ = state::connecting;
  const unsigned epoch = ++epoch_;
  reader_ = std::make_unique<resp::reader>();
  heard_ = false;
  if (options_.tls.context) {
    tls_ = std::make_shared<asio::ssl::stream<asio::ip::tcp::socket>>(io_, *options_.tls.context);
  }
  auto self = shared_from_this();
  connect_timer_.expires_after(options_.connect_timeout);
  connect_timer_.async_wait([this, self, epoch](std::error_code ec) {
    if (ec || epoch != epoch_ || state_ != state::connecting) return;
    fail(errc::connection, "cannot connect to " + options_.target.address() + ": timed out after " +
                               std::to_string(options_.connect_timeout.count()) + " ms");
  });
  resolver_.async_resolve(
      options_.target.host, std::to_string(options_.target.port),
      [this, self, epoch](std::error_code ec, asio::ip::tcp::resolver::results_type results) {
        if (epoch != epoch_ || state_ != state::connecting) return;
        if (ec) {
          fail(errc::connection, "cannot resolve " + options_.target.host + ": " + ec.message());
          return;
        }
        asio::async_connect(
            lowest(), results,
            [this, self, epoch, asked = clock::now()](std::error_code ec,
                                                      const asio::ip::tcp::endpoint&) {
              if (epoch != epoch_ || state_ != state::connecting) return;
              if (ec) {
                fail(errc::connection,
                     "cannot connect to " + options_.target.address() + ": " + ec.message());
                return;
              }
              if (tls_) {
                start_tls();
                probe_if_unanswered(clock::now() - asked);
                return;
              }
              on_connected();
            });
      });
}

// TLS over the connected socket: the server's certificate is verified against the client's CAs
// and its name against the host connected to (or the configured server name), which is also
// sent as SNI when it is a name, not an address.
void connection::start_tls() {
  const std::string& name =
      options_.tls.server_name.empty() ? options_.target.host : options_.tls.server_name;
  SSL* ssl = tls_->native_handle();
  std::error_code not_an_address;
  asio::ip::make_address(name, not_an_address);
  // OpenSSL's own check of the name, so a mismatch is reported as one (X509_V_ERR_*_MISMATCH).
  const bool named =
      not_an_address ? SSL_set_tlsext_host_name(ssl, name.c_str()) == 1 &&
                           (!options_.tls.verify || SSL_set1_host(ssl, name.c_str()) == 1)
                     : !options_.tls.verify ||
                           X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) == 1;
  if (!named) {
    fail(errc::connection,
         "TLS to " + options_.target.address() + ": cannot use the name '" + name + "'");
    return;
  }
  auto self = shared_from_this();
  const unsigned epoch = epoch_;
  tls_->async_handshake(
      asio::ssl::stream_base::client, [this, self, epoch, stream = tls_, name](std::error_code ec) {
        if (epoch != epoch_ || state_ != state::connecting) return;
        if (ec) {
          fail(errc::connection, "TLS handshake with " + options_.target.address() +
                                     " failed: " + tls_refusal(stream->native_handle(), ec, name));
          return;
        }
        stop_probe();
        on_connected();
      });
}

// A plain Redis never answers a ClientHello (plain_probe.hpp says why), so a handshake it gets
// waits for the connect timeout. When the server has not answered ours within a few round trips
// (the TCP connect's, at least 20 ms: a TLS server answers within one plus its key exchange),
// ask the port in plain RESP on a second connection; a RESP answer ends the attempt at once.
void connection::probe_if_unanswered(clock::duration connect_took) {
  auto self = shared_from_this();
  const unsigned epoch = epoch_;
  probe_timer_.expires_after(
      std::max<clock::duration>(std::chrono::milliseconds(20), 4 * connect_took));
  probe_timer_.async_wait([this, self, epoch, stream = tls_](std::error_code ec) {
    if (ec || epoch != epoch_ || state_ != state::connecting) return;
    // Still at our ClientHello: no ServerHello has arrived.
    if (SSL_get_state(stream->native_handle()) != TLS_ST_CW_CLNT_HELLO) return;
    std::error_code unknown;
    const auto peer = lowest().remote_endpoint(unknown);
    if (unknown) return;
    log(log_level::debug,
        "TLS hello to " + options_.target.address() + " unanswered: asking the port in plain RESP");
    probe_ = plain_probe::start(io_, peer, [this, self, epoch] {
      if (epoch != epoch_ || state_ != state::connecting) return;
      fail(errc::connection, "TLS handshake with " + options_.target.address() +
                                 " failed: the server does not speak TLS on this port (it "
                                 "answers plain RESP): a plain port? use redis://");
    });
  });
}

void connection::stop_probe() {
  probe_timer_.cancel();
  if (probe_) std::exchange(probe_, nullptr)->cancel();
}

void connection::on_connected() {
  // Asio opens sockets without SOCK_CLOEXEC: a program that uses relock and then runs another
  // (relock run, a daemon's fork+exec) would hand its Redis connections to the child.
  ::fcntl(lowest().native_handle(), F_SETFD, FD_CLOEXEC);
  std::error_code ignored;
  // Small pipelined writes must leave at once: Nagle would add up to 40 ms to a lock.
  lowest().set_option(asio::ip::tcp::no_delay(true), ignored);
  lowest().set_option(asio::socket_base::keep_alive(true), ignored);

  const endpoint& t = options_.target;
  resp::request hello;
  if (!t.password.empty()) {
    if (t.user.empty()) {
      hello.push({"AUTH", t.password});
    } else {
      hello.push({"AUTH", t.user, t.password});
    }
  }
  const std::string db = std::to_string(t.db);
  if (t.db != 0) hello.push({"SELECT", db});
  hello.push({"CLIENT", "SETNAME", options_.client_name.empty() ? "relock" : options_.client_name});

  // The handshake goes first on the new socket, ahead of everything queued while we were down.
  pending p;
  p.payload = std::move(hello).take_payload();
  p.expected = hello.commands();
  p.deadline = clock::time_point::max();
  // `this` alone: the callback lives in this connection's own queue.
  p.callback = [this](std::error_code ec, reply_span replies) {
    if (!ec) on_handshake(replies);
  };
  written_.push_front(std::move(p));
  write_buffer_ = written_.front().payload;
  write_buffered();
  read();
}

void connection::on_handshake(reply_span replies) {
  const endpoint& t = options_.target;
  std::size_t i = 0;
  if (!t.password.empty()) {
    const resp::reply& auth = replies[i++];
    if (auth.is_error()) {
      fail(errc::auth_failed, "authentication to " + t.address() + " failed: " + auth.str);
      return;
    }
  }
  if (t.db != 0) {
    const resp::reply& select = replies[i++];
    if (select.is_error()) {
      fail(errc::server_error,
           "SELECT " + std::to_string(t.db) + " on " + t.address() + " failed: " + select.str);
      return;
    }
  }
  const resp::reply& name = replies[i];
  if (name.is_error()) {
    if (name.error_code() == "NOAUTH") {
      fail(errc::auth_failed, t.address() + " requires a password: " + name.str);
      return;
    }
    log(log_level::warning, "CLIENT SETNAME refused by " + t.address() + ": " + name.str);
  }
  connect_timer_.cancel();
  state_ = state::ready;
  backoff_.reset();
  log(log_level::info, "connected to " + t.address());
  if (lost_at_) {
    const auto down_for = std::chrono::duration_cast<std::chrono::microseconds>(
        clock::now() - *std::exchange(lost_at_, std::nullopt));
    if (options_.observer) {
      options_.observer->on_connection(
          {.address = t.address(), .change = connection_change::restored, .down_for = down_for});
    }
  }
  if (first_result_) std::exchange(first_result_, {})(std::error_code(), std::string());
  if (on_ready_) on_ready_();
  flush();
}

void connection::fail(std::error_code ec, const std::string& why) {
  if (state_ == state::closed || state_ == state::waiting_to_retry) return;
  const bool was_ready = state_ == state::ready;
  log(log_level::warning, why);
  ++epoch_;  // callbacks of the dying socket must not touch the next one
  std::error_code ignored;
  lowest().close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  stop_probe();
  writing_ = false;

  // Written requests may have run: they fail and are never resent. A subscriber connection
  // also drops its queue (the subscriptions are rebuilt from their record on reconnect), and a
  // refused password fails everything: waiting for it to change would only hide the cause.
  containers::fifo<pending> doomed = std::move(written_);
  written_.clear();
  if (options_.push_mode || ec == make_error_code(errc::auth_failed)) {
    for (auto& p : queued_) doomed.push_back(std::move(p));
    queued_.clear();
  }
  state_ = state::waiting_to_retry;
  for (auto& p : doomed) complete_failed(p, ec, why);
  if (first_result_) std::exchange(first_result_, {})(ec, why);
  if (was_ready) {
    lost_at_ = clock::now();
    if (options_.observer) {
      const std::string address = options_.target.address();
      options_.observer->on_connection(
          {.address = address, .change = connection_change::lost, .error = ec});
    }
    if (on_down_) on_down_();
  }
  schedule_reconnect();
}

void connection::schedule_reconnect() {
  if (state_ == state::closed) return;
  auto delay = backoff_.next();
  auto self = shared_from_this();
  retry_timer_.expires_after(delay);
  retry_timer_.async_wait([this, self](std::error_code ec) {
    if (ec || state_ != state::waiting_to_retry) return;
    if (options_.next_target) {
      if (auto next = options_.next_target()) options_.target = std::move(*next);
    }
    connect();
  });
}

void connection::retarget(endpoint where) {
  if (state_ == state::closed) return;
  const bool same = where.host == options_.target.host && where.port == options_.target.port;
  const std::string address = where.address();
  options_.target = std::move(where);
  if (same || state_ == state::idle) return;
  if (state_ != state::waiting_to_retry) {
    fail(errc::connection, "leaving for the new master " + address);
  }
  // fail() would wait out the backoff, which has grown for as long as the old master was away
  // (up to reconnect_max_delay): the new one is worth trying now, with what is queued for it.
  if (state_ != state::waiting_to_retry) return;  // one of the failed callbacks closed it
  retry_timer_.cancel();
  backoff_.reset();
  connect();
}

void connection::close() {
  if (state_ == state::closed) return;
  state_ = state::closed;
  ++epoch_;
  std::error_code ignored;
  lowest().close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  stop_probe();
  retry_timer_.cancel();
  deadline_timer_.cancel();
  containers::fifo<pending> doomed = std::move(written_);
  for (auto& p : queued_) doomed.push_back(std::move(p));
  written_.clear();
  queued_.clear();
  for (auto& p : doomed) complete_failed(p, errc::cancelled, "the client was closed");
  if (first_result_) std::exchange(first_result_, {})(errc::cancelled, "the client was closed");
}

void connection::send(resp::request request, clock::time_point deadline, reply_callback callback,
                      std::size_t key_hash, std::uint32_t route) {
  if (state_ == state::closed) {
    // Posted, never called from inside send(): the sender may be in the middle of changing
    // state that the callback's owner also touches (a waiter queue being woken, at shutdown).
    asio::post(io_, [callback = std::move(callback)]() mutable {
      call_failed(callback, errc::cancelled, "the client was closed");
    });
    return;
  }
  pending p;
  p.expected = options_.push_mode ? 0 : request.commands();
  p.payload = std::move(request).take_payload();
  p.deadline = deadline;
  p.callback = std::move(callback);
  p.key_hash = key_hash;
  p.route = route;
  if (key_hash != 0) count_key(key_hash);
  queued_.push_back(std::move(p));
  arm_deadline(deadline);
  flush();
}

std::size_t connection::withdraw(const std::function<bool(std::uint32_t route)>& leaves) {
  // Callbacks run last: they may send again, here too, which must not disturb this walk.
  std::vector<reply_callback> taken;
  for (auto it = queued_.begin(); it != queued_.end();) {
    if (it->route != 0 && leaves(it->route)) {
      forget_key(*it);
      taken.push_back(std::move(it->callback));
      it = queued_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& callback : taken) {
    if (callback) call_failed(callback, withdrawn(), "taken back unwritten");
  }
  return taken.size();
}

void connection::flush() {
  if (state_ != state::ready || writing_ || queued_.empty()) return;
  // Everything queued goes out in one write: that is the pipelining.
  write_buffer_.clear();
  std::vector<pending> done_on_write;  // push mode's requests (no reply): rare, so no deque
  while (!queued_.empty()) {
    pending& p = queued_.front();
    write_buffer_ += p.payload;
    resp::spare_payloads::give(std::move(p.payload));  // the next request encodes into it
    if (p.expected == 0) {
      done_on_write.push_back(std::move(p));
    } else {
      written_.push_back(std::move(p));
    }
    queued_.pop_front();
  }
  write_buffered();
  for (auto& p : done_on_write) complete(p, {}, reply_span());
}

void connection::write_buffered() {
  writing_ = true;
  auto self = shared_from_this();
  const unsigned epoch = epoch_;
  auto written = [this, self, epoch, stream = tls_](std::error_code ec, std::size_t) {
    if (epoch != epoch_) return;
    writing_ = false;
    // A server that refuses the session (a TLS alert, a TLS port closing on plain bytes) may
    // reset the connection under our first write; the read, always pending by then, finds why.
    if (ec && state_ == state::connecting && !heard_) return;
    if (ec) {
      fail(errc::connection, "write to " + options_.target.address() + " failed: " + ec.message());
      return;
    }
    flush();  // what was queued meanwhile goes out in the next write
  };
  if (tls_) {
    asio::async_write(*tls_, asio::buffer(write_buffer_), std::move(written));
  } else {
    asio::async_write(socket_, asio::buffer(write_buffer_), std::move(written));
  }
}

void connection::read() {
  auto self = shared_from_this();
  const unsigned epoch = epoch_;
  auto got = [this, self, epoch, stream = tls_](std::error_code ec, std::size_t n) {
    if (epoch != epoch_) return;
    if (!heard_ && state_ == state::connecting) {
      // The first answer of this attempt, or its absence, may say that one side speaks TLS and
      // the other does not.
      const std::string refused = first_answer_refusal(stream, ec, read_buffer_.data(), n);
      if (!refused.empty()) {
        fail(errc::connection, refused);
        return;
      }
    }
    if (ec) {
      // A TLS server that closes without close_notify (Redis on shutdown or CLIENT KILL) ends
      // the stream short: that is a close too.
      const bool closed = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
      fail(errc::connection, "connection to " + options_.target.address() +
                                 " lost: " + (closed ? "closed by the server" : ec.message()));
      return;
    }
    heard_ = true;
    try {
      reader_->feed(read_buffer_.data(), n);
      while (auto reply = reader_->next()) {
        dispatch(std::move(*reply));
        if (epoch != epoch_) return;  // a callback closed or broke the connection
      }
    } catch (const resp::protocol_error& e) {
      fail(errc::connection, "protocol error from " + options_.target.address() + ": " + e.what());
      return;
    }
    read();
  };
  if (tls_) {
    tls_->async_read_some(asio::buffer(read_buffer_), std::move(got));
  } else {
    socket_.async_read_some(asio::buffer(read_buffer_), std::move(got));
  }
}

// Before the first byte of the first reply: why the session could not start, or "" when this
// is no such case. A TLS server refuses a plain connection by closing it (Redis: a reset, no
// word) or with a TLS alert record; a TLS 1.3 server gives its verdict on the client's
// certificate after the handshake, on the first read.
std::string connection::first_answer_refusal(
    const std::shared_ptr<asio::ssl::stream<asio::ip::tcp::socket>>& stream,
    const std::error_code& ec, const char* first, std::size_t n) const {
  const std::string where = options_.target.address();
  if (stream) {
    if (!ec || ec.category() != asio::error::get_ssl_category()) return {};
    const std::string& name =
        options_.tls.server_name.empty() ? options_.target.host : options_.tls.server_name;
    return "TLS session with " + where +
           " refused: " + tls_refusal(stream->native_handle(), ec, name);
  }
  const bool closed = ec == asio::error::eof || ec == asio::error::connection_reset;
  // A TLS record: content type alert (21) or handshake (22), then major version 3.
  const bool tls_record = !ec && n >= 2 && (first[0] == 21 || first[0] == 22) && first[1] == 3;
  if (closed) {
    return "connection to " + where + " closed by the server before any reply (" + ec.message() +
           "): is this a TLS port? use rediss://";
  }
  if (tls_record) {
    return "the server at " + where + " answered in TLS: it is a TLS port, use rediss://";
  }
  return {};
}

void connection::dispatch(resp::reply reply) {
  if (!written_.empty()) {
    pending& front = written_.front();
    if (--front.expected > 0) {
      front.replies.push_back(std::move(reply));
      return;
    }
    pending done = std::move(front);
    written_.pop_front();
    if (done.replies.empty()) {
      complete(done, {}, reply_span(&reply, 1));  // one command: no vector to gather them in
    } else {
      done.replies.push_back(std::move(reply));
      complete(done, {}, done.replies);
    }
    return;
  }
  if (options_.push_mode && state_ == state::ready && on_push_) {
    on_push_(reply);
    return;
  }
  fail(errc::connection,
       "unexpected reply from " + options_.target.address() + ": " + resp::to_string(reply));
}

void connection::complete(pending& p, std::error_code ec, reply_span replies) {
  forget_key(p);
  if (p.callback) std::exchange(p.callback, {})(ec, replies);
}

void connection::complete_failed(pending& p, std::error_code ec, std::string why) {
  forget_key(p);
  if (!p.callback) return;
  auto callback = std::exchange(p.callback, {});
  call_failed(callback, ec, std::move(why));
}

void connection::count_key(std::size_t key_hash) {
  if (auto it = unanswered_keys_.find(key_hash); it != unanswered_keys_.end()) {
    ++it->second;
  } else if (auto node = spare_keys_.take()) {
    node.key() = key_hash;
    node.mapped() = 1;
    unanswered_keys_.insert(std::move(node));
  } else {
    unanswered_keys_.emplace(key_hash, 1);
  }
}

void connection::forget_key(pending& p) {
  if (p.key_hash == 0) return;
  auto it = unanswered_keys_.find(std::exchange(p.key_hash, 0));
  if (it != unanswered_keys_.end() && --it->second == 0) spare_keys_.keep(unanswered_keys_, it);
}

void connection::arm_deadline(clock::time_point when) {
  if (when >= deadline_armed_for_) return;
  deadline_armed_for_ = when;
  deadline_timer_.expires_at(when);
  auto self = shared_from_this();
  deadline_timer_.async_wait([this, self](std::error_code ec) {
    if (ec) return;  // re-armed earlier, or closed
    deadline_armed_for_ = clock::time_point::max();
    expire_deadlines();
  });
}

void connection::expire_deadlines() {
  const auto now = clock::now();
  auto next = clock::time_point::max();
  // A queued request that times out leaves the queue; a written one stays in place, answered
  // by nobody, so that the replies after it still match their requests. Callbacks run last:
  // they may send, which must not disturb this walk.
  std::vector<reply_callback> expired;
  for (auto it = queued_.begin(); it != queued_.end();) {
    if (it->deadline <= now) {
      forget_key(*it);  // never written: the server will not run it
      expired.push_back(std::move(it->callback));
      it = queued_.erase(it);
    } else {
      next = std::min(next, it->deadline);
      ++it;
    }
  }
  for (auto& p : written_) {
    if (!p.callback) continue;
    if (p.deadline <= now) {
      expired.push_back(std::exchange(p.callback, {}));
    } else {
      next = std::min(next, p.deadline);
    }
  }
  if (next != clock::time_point::max()) arm_deadline(next);
  const std::string why = "no reply from " + options_.target.address() + " in time";
  for (auto& callback : expired) {
    if (callback) call_failed(callback, errc::timeout, why);
  }
}

}  // namespace relock::net
