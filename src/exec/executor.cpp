#include "exec/executor.hpp"

#include <functional>

#include <asio/dispatch.hpp>
#include <asio/post.hpp>
#include <relock/errors.hpp>

#include "exec/retry_policy.hpp"

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
  return errc::server_error;
}

struct executor::eval_call {
  const script* code;
  std::vector<std::string> keys;
  std::vector<std::string> args;
  result_callback callback;
  net::clock::time_point deadline;
  bool reloaded = false;
  bool idempotent = false;
  std::unique_ptr<asio::steady_timer> delay;
};

executor::executor(asio::io_context& io, std::vector<std::shared_ptr<net::connection>> pool,
                   executor_options options)
    : io_(io), pool_(std::move(pool)), options_(options) {}

template <class F>
void executor::on_io(F&& f) {
  // Posted from other threads; run at once when already on the I/O thread.
  asio::dispatch(io_, std::forward<F>(f));
}

std::size_t executor::awaiting_replies() const {
  std::size_t n = 0;
  for (const auto& c : pool_) n += c->awaiting_replies();
  return n;
}

std::size_t executor::live_outstanding() const {
  std::size_t n = 0;
  for (const auto& c : pool_) {
    if (c->ready()) n += c->outstanding();
  }
  return n;
}

void executor::close() {
  closed_ = true;
  for (auto& c : pool_) c->close();
  // Their timers' handlers resend into the closed pool, which fails them with cancelled.
  for (const auto& call : delayed_) call->delay->cancel();
}

net::connection& executor::route(std::string_view key) {
  if (pool_.size() > 1) {
    if (const std::size_t h = key_hash_of(key); h != 0) {
      for (const auto& c : pool_) {
        if (c->carries(h)) return *c;
      }
    }
  }
  net::connection* best = pool_.front().get();
  for (const auto& c : pool_) {
    if (c->ready() != best->ready()) {
      if (c->ready()) best = c.get();
    } else if (c->outstanding() < best->outstanding()) {
      best = c.get();
    }
  }
  return *best;
}

void executor::send(std::string_view key, resp::request request, net::clock::time_point deadline,
                    net::reply_callback callback) {
  route(key).send(std::move(request), deadline, std::move(callback), key_hash_of(key));
}

void executor::run(std::string_view key, resp::request request, result_callback callback) {
  run_pipeline(key, std::move(request),
               [callback = std::move(callback)](std::error_code ec,
                                                std::vector<resp::reply> replies) mutable {
                 resp::reply r = replies.empty() ? resp::reply{} : std::move(replies.back());
                 if (!ec && r.is_error()) ec = classify(r);
                 callback(ec, std::move(r));
               });
}

void executor::run_pipeline(std::string_view key, resp::request request,
                            net::reply_callback callback) {
  auto deadline = net::clock::now() + options_.command_timeout;
  on_io([this, key = std::string(key), request = std::move(request), deadline,
         callback = std::move(callback)]() mutable {
    send(key, std::move(request), deadline, std::move(callback));
  });
}

void executor::eval(const script& s, std::vector<std::string> keys, std::vector<std::string> args,
                    result_callback callback, bool idempotent, std::chrono::milliseconds timeout) {
  auto call = std::make_shared<eval_call>();
  call->code = &s;
  call->keys = std::move(keys);
  call->args = std::move(args);
  call->callback = std::move(callback);
  call->idempotent = idempotent;
  call->deadline = net::clock::now() + (timeout.count() > 0 ? timeout : options_.command_timeout);
  on_io([this, call = std::move(call)]() mutable { send_eval(std::move(call)); });
}

void executor::send_eval(std::shared_ptr<eval_call> call) {
  resp::request request;
  if (call->reloaded) request.push({"SCRIPT", "LOAD", call->code->source});
  const std::string numkeys = std::to_string(call->keys.size());
  std::vector<std::string_view> argv;
  argv.reserve(3 + call->keys.size() + call->args.size());
  argv.insert(argv.end(), {"EVALSHA", call->code->sha, numkeys});
  argv.insert(argv.end(), call->keys.begin(), call->keys.end());
  argv.insert(argv.end(), call->args.begin(), call->args.end());
  request.push(std::span<const std::string_view>(argv));

  const std::string_view key = call->keys.empty() ? std::string_view() : call->keys.front();
  send(key, std::move(request), call->deadline,
       [this, call](std::error_code ec, std::vector<resp::reply> replies) mutable {
         resp::reply r = replies.empty() ? resp::reply{} : std::move(replies.back());
         attempt a;
         a.connection_failed = ec == make_error_code(errc::connection);
         a.written = true;  // a connection only fails requests it has written
         a.idempotent = call->idempotent;
         a.error_code = ec ? std::string_view() : r.error_code();
         a.script_reloaded = call->reloaded;
         a.time_left = net::clock::now() < call->deadline;
         switch (decide(a)) {
           case next_step::load_script_and_retry:
             call->reloaded = true;
             send_eval(std::move(call));
             return;
           case next_step::retry_after_delay:
             if (closed_) break;
             call->delay = std::make_unique<asio::steady_timer>(io_, busy_server_delay);
             delayed_.insert(call);
             call->delay->async_wait([this, call](std::error_code) mutable {
               delayed_.erase(call);
               send_eval(std::move(call));
             });
             return;
           default:
             break;
         }
         if (!ec && r.is_error()) ec = classify(r);
         std::exchange(call->callback, {})(ec, std::move(r));
       });
}

}  // namespace relock::exec
