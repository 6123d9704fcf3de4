// CommandExecutor: runs commands and scripts on the right connection, from any thread.
//
// Callers on any thread hand work over; it runs on the I/O thread, where every callback is
// called. Scripts go by EVALSHA and are loaded on NOSCRIPT; what else may be retried is
// decided only by retry_policy.
//
// Commands go over a small pool of connections to the server. One would make client and
// server take turns (a batch out, a batch back, the next batch forms only then); with several,
// one connection's replies are handled while the server works on another's. A request goes to
// the connection that still carries a request for its key (so a key's commands keep their
// order, even behind one that timed out), else to the least busy ready one, the first on ties.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <relock/detail/unique_function.hpp>
#include "exec/script.hpp"
#include "net/connection.hpp"
#include "resp/reply.hpp"
#include "resp/request.hpp"

namespace relock::exec {

// On failure: the error code, and a reply whose text explains it (the server's own text for
// error replies).
using result_callback = detail::unique_function<void(std::error_code, resp::reply)>;

// The error code for an error reply: WRONGTYPE, NOAUTH... get their own, the rest server_error.
std::error_code classify(const resp::reply& error_reply);

struct executor_options {
  std::chrono::milliseconds command_timeout{3'000};
};

class executor {
 public:
  executor(asio::io_context& io, std::vector<std::shared_ptr<net::connection>> pool,
           executor_options options);

  // One command, routed by `key` (the first key it touches; empty for keyless commands).
  void run(std::string_view key, resp::request request, result_callback callback);

  // Several commands for one node, sent together; all replies come back at once.
  void run_pipeline(std::string_view key, resp::request request, net::reply_callback callback);

  // EVALSHA with the script's local SHA; routed by keys[0]. `idempotent` scripts (renewals,
  // latch-protected releases) may be resent after a lost connection; others never are.
  // `timeout` overrides the command timeout.
  void eval(const script& s, std::vector<std::string> keys, std::vector<std::string> args,
            result_callback callback, bool idempotent = false,
            std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());

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

  // Closes every connection: whatever is outstanding, or waiting to be resent, fails with
  // errc::cancelled; later requests fail the same way (I/O thread only).
  void close();

 private:
  struct eval_call;
  void send_eval(std::shared_ptr<eval_call> call);
  void send(std::string_view key, resp::request request, net::clock::time_point deadline,
            net::reply_callback callback);
  template <class F>
  void on_io(F&& f);

  asio::io_context& io_;
  std::vector<std::shared_ptr<net::connection>> pool_;
  executor_options options_;
  std::unordered_set<std::shared_ptr<eval_call>> delayed_;  // waiting to be resent
  bool closed_ = false;
};

}  // namespace relock::exec
