// SPDX-License-Identifier: Apache-2.0
#include "support/fault_proxy.hpp"

#include <array>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

namespace relock::test {

using asio::ip::tcp;

enum class proxy_mode { pass, delay, drop_replies, blackhole };

class session;

struct fault_proxy::state {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  tcp::endpoint target;
  std::atomic<proxy_mode> mode{proxy_mode::pass};
  std::atomic<long long> delay_ms{0};
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> orphan_reply_bytes{0};
  std::set<std::shared_ptr<session>> sessions;  // I/O thread only
};

// One client connection and its connection to the target; two pumps, one per direction.
class session : public std::enable_shared_from_this<session> {
 public:
  session(fault_proxy::state& s, tcp::socket client)
      : state_(s), client_(std::move(client)), server_(s.io) {}

  void start() {
    server_.async_connect(state_.target, [self = shared_from_this()](std::error_code ec) {
      if (ec) return self->close(false);
      ++self->state_.open;
      self->counted_ = true;
      self->pump(self->client_, self->server_, self->up_, false);
      self->pump(self->server_, self->client_, self->down_, true);
    });
  }

  bool lost_bytes() const { return lost_bytes_; }

  // Held directions keep what they read, in order, instead of forwarding it.
  void hold(bool requests) {
    if (closed_) return;
    hold_down_ = true;
    hold_up_ = hold_up_ || requests;
  }
  bool held() const { return hold_down_ || hold_up_; }
  std::size_t held_request_bytes() const { return held_up_.size(); }
  std::size_t held_reply_bytes() const { return held_down_.size(); }

  // The client side ends with a reset; the server side stays, with what it holds.
  void cut() {
    if (closed_ || cut_) return;
    cut_ = true;
    std::error_code ignored;
    client_.set_option(asio::socket_base::linger(true, 0), ignored);
    client_.close(ignored);
    state_.orphan_reply_bytes += held_down_.size();
    held_down_.clear();
  }

  // What was held goes on, in order; later bytes queue behind it until it is written.
  void release() {
    if (closed_) return;
    flush_held(server_, held_up_, hold_up_);
    if (cut_) {
      state_.orphan_reply_bytes += held_down_.size();
      held_down_.clear();
      hold_down_ = false;
    } else {
      flush_held(client_, held_down_, hold_down_);
    }
  }

  // `reset`: SO_LINGER 0, so the peers see a reset, not an orderly end.
  void close(bool reset) {
    if (closed_) return;
    closed_ = true;
    for (tcp::socket* s : {&client_, &server_}) {
      std::error_code ignored;
      if (reset && s->is_open()) s->set_option(asio::socket_base::linger(true, 0), ignored);
      s->close(ignored);
    }
    if (counted_) --state_.open;
    state_.sessions.erase(shared_from_this());
  }

 private:
  struct direction {
    std::array<char, 16384> buffer{};
    std::unique_ptr<asio::steady_timer> timer;
  };

  void pump(tcp::socket& from, tcp::socket& to, direction& d, bool is_reply) {
    from.async_read_some(asio::buffer(d.buffer), [self = shared_from_this(), &from, &to, &d,
                                                  is_reply](std::error_code ec, std::size_t n) {
      // A cut client: its side is gone on purpose, the server side stays.
      if (ec && self->cut_ && !is_reply) return;
      if (ec) return self->close(false);
      self->deliver(from, to, d, is_reply, n);
    });
  }

  // Writes `held` to `to`, then again whatever was held meanwhile, and only then lets the
  // direction pass: its bytes keep their order.
  void flush_held(tcp::socket& to, std::string& held, bool& holding) {
    if (held.empty()) {
      holding = false;
      return;
    }
    auto bytes = std::make_shared<std::string>(std::exchange(held, {}));
    asio::async_write(
        to, asio::buffer(*bytes),
        [self = shared_from_this(), bytes, &to, &held, &holding](std::error_code ec, std::size_t) {
          if (ec) return self->close(false);
          self->flush_held(to, held, holding);
        });
  }

  // What the current mode does with a chunk that was read.
  void deliver(tcp::socket& from, tcp::socket& to, direction& d, bool is_reply, std::size_t n) {
    if (closed_) return;
    if (is_reply && cut_) {  // nobody to deliver it to
      state_.orphan_reply_bytes += n;
      return pump(from, to, d, is_reply);
    }
    if (is_reply ? hold_down_ : hold_up_) {
      (is_reply ? held_down_ : held_up_).append(d.buffer.data(), n);
      return pump(from, to, d, is_reply);
    }
    const proxy_mode mode = state_.mode.load();
    if (mode == proxy_mode::drop_replies && is_reply) {
      lost_bytes_ = true;
      return pump(from, to, d, is_reply);  // read on, so the server never blocks
    }
    // The stream lost bytes: it cannot go on, as a real connection could not.
    if (lost_bytes_) return close(true);
    if (mode == proxy_mode::blackhole || mode == proxy_mode::delay) {
      // Held: in a blackhole until it lifts (looked at every 10 ms), in a delay once.
      const auto hold = mode == proxy_mode::delay
                            ? std::chrono::milliseconds(state_.delay_ms.load())
                            : std::chrono::milliseconds(10);
      if (!d.timer) d.timer = std::make_unique<asio::steady_timer>(state_.io);
      d.timer->expires_after(hold);
      d.timer->async_wait(
          [self = shared_from_this(), &from, &to, &d, is_reply, n, mode](std::error_code) {
            if (mode == proxy_mode::delay) return self->forward(from, to, d, is_reply, n);
            self->deliver(from, to, d, is_reply, n);
          });
      return;
    }
    forward(from, to, d, is_reply, n);
  }

  // Writes what was read, then reads on: one chunk at a time keeps the order.
  void forward(tcp::socket& from, tcp::socket& to, direction& d, bool is_reply, std::size_t n) {
    if (closed_) return;
    asio::async_write(
        to, asio::buffer(d.buffer.data(), n),
        [self = shared_from_this(), &from, &to, &d, is_reply](std::error_code ec, std::size_t) {
          if (ec) return self->close(false);
          self->pump(from, to, d, is_reply);
        });
  }

  fault_proxy::state& state_;
  tcp::socket client_;
  tcp::socket server_;
  direction up_;
  direction down_;
  bool closed_ = false;
  bool counted_ = false;
  bool lost_bytes_ = false;  // a reply was dropped: reset once the drop is over
  bool hold_up_ = false;     // what the client sends is held (held_up_)
  bool hold_down_ = false;   // what the server sends is held (held_down_)
  bool cut_ = false;         // the client side was reset on purpose; the server side stays
  std::string held_up_;
  std::string held_down_;
};

namespace {

void accept_next(fault_proxy::state& s) {
  s.acceptor.async_accept([&s](std::error_code ec, tcp::socket client) {
    if (ec) return;  // closed: the proxy is going away
    ++s.accepted;
    auto session_ptr = std::make_shared<session>(s, std::move(client));
    s.sessions.insert(session_ptr);
    session_ptr->start();
    accept_next(s);
  });
}

}  // namespace

fault_proxy::fault_proxy(std::string target_host, std::uint16_t target_port)
    : state_(std::make_shared<state>()) {
  state_->target = tcp::endpoint(asio::ip::make_address(target_host), target_port);
  const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(local.protocol());
  state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(local);
  state_->acceptor.listen();
  port_ = state_->acceptor.local_endpoint().port();
  accept_next(*state_);
  thread_ = std::thread([s = state_] { s->io.run(); });
}

fault_proxy::~fault_proxy() {
  asio::post(state_->io, [s = state_] {
    std::error_code ignored;
    s->acceptor.close(ignored);
    auto sessions = s->sessions;  // close() erases from the set
    for (const auto& x : sessions) x->close(false);
    s->io.stop();
  });
  thread_.join();
}

namespace {

// Runs `f` on the proxy's thread and waits for it.
template <class F>
auto on_proxy(const std::shared_ptr<fault_proxy::state>& s, F f) {
  std::promise<decltype(f())> done;
  asio::post(s->io, [&] {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      done.set_value();
    } else {
      done.set_value(f());
    }
  });
  return done.get_future().get();
}

// Connections that lost a reply end with a reset as soon as the drop is over, even if nothing
// more is sent on them.
void reset_broken(const std::shared_ptr<fault_proxy::state>& s) {
  asio::post(s->io, [s] {
    auto sessions = s->sessions;
    for (const auto& x : sessions) {
      if (x->lost_bytes()) x->close(true);
    }
  });
}

}  // namespace

void fault_proxy::pass() {
  state_->mode = proxy_mode::pass;
  reset_broken(state_);
}

void fault_proxy::delay(std::chrono::milliseconds d) {
  state_->delay_ms = d.count();
  state_->mode = proxy_mode::delay;
  reset_broken(state_);
}

void fault_proxy::drop_replies() { state_->mode = proxy_mode::drop_replies; }

void fault_proxy::blackhole() {
  state_->mode = proxy_mode::blackhole;
  reset_broken(state_);
}

void fault_proxy::reset_all() {
  on_proxy(state_, [s = state_] {
    auto sessions = s->sessions;  // close() erases from the set
    for (const auto& x : sessions) x->close(true);
  });
}

void fault_proxy::hold_replies() {
  on_proxy(state_, [s = state_] {
    for (const auto& x : s->sessions) x->hold(false);
  });
}

void fault_proxy::hold_requests() {
  on_proxy(state_, [s = state_] {
    for (const auto& x : s->sessions) x->hold(true);
  });
}

void fault_proxy::cut_held() {
  on_proxy(state_, [s = state_] {
    for (const auto& x : s->sessions) {
      if (x->held()) x->cut();
    }
  });
}

void fault_proxy::release_held() {
  on_proxy(state_, [s = state_] {
    for (const auto& x : s->sessions) x->release();
  });
}

std::size_t fault_proxy::held_request_bytes() const {
  return on_proxy(state_, [s = state_] {
    std::size_t n = 0;
    for (const auto& x : s->sessions) n += x->held_request_bytes();
    return n;
  });
}

std::size_t fault_proxy::held_reply_bytes() const {
  return on_proxy(state_, [s = state_] {
    std::size_t n = 0;
    for (const auto& x : s->sessions) n += x->held_reply_bytes();
    return n;
  });
}

std::uint64_t fault_proxy::orphan_reply_bytes() const { return state_->orphan_reply_bytes.load(); }

std::size_t fault_proxy::connections() const { return state_->open.load(); }

std::uint64_t fault_proxy::accepted() const { return state_->accepted.load(); }

}  // namespace relock::test
