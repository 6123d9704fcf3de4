// SPDX-License-Identifier: Apache-2.0
#include "support/raw_client.hpp"

#include "support/redis_server.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace relock::test {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis 0.14 speaks RESP2 only and nests at most 7 levels, so recursion stays shallow.
resp::reply convert(const redisReply& r) {
  switch (r.type) {
    case REDIS_REPLY_STATUS:
      return resp::reply::make_status(std::string(r.str, r.len));
    case REDIS_REPLY_ERROR:
      return resp::reply::make_error(std::string(r.str, r.len));
    case REDIS_REPLY_INTEGER:
      return resp::reply::make_integer(r.integer);
    case REDIS_REPLY_STRING:
      return resp::reply::make_string(std::string(r.str, r.len));
    case REDIS_REPLY_ARRAY: {
      std::vector<resp::reply> elements;
      elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) elements.push_back(convert(*r.element[i]));
      return resp::reply::make_array(std::move(elements));
    }
    default:
      return resp::reply::make_nil();
  }
}

}  // namespace

void raw_client::context_deleter::operator()(redisContext* c) const { redisFree(c); }

raw_client::raw_client(std::string host, std::uint16_t port, std::string password, std::string user,
                       std::chrono::milliseconds timeout)
    : host_(std::move(host)),
      port_(port),
      password_(std::move(password)),
      user_(std::move(user)),
      timeout_(timeout) {
  connect();
}

raw_client::~raw_client() = default;
raw_client::raw_client(raw_client&&) noexcept = default;
raw_client& raw_client::operator=(raw_client&&) noexcept = default;

raw_client raw_client::to(const redis_server& server) {
  return raw_client(server.host(), server.port(), server.options().password,
                    server.options().acl_user);
}

std::string raw_client::where() const {
  return "raw_client " + host_ + ":" + std::to_string(port_);
}

void raw_client::connect() {
  context_.reset();
  std::unique_ptr<redisContext, context_deleter> c(
      redisConnectWithTimeout(host_.c_str(), port_, to_timeval(timeout_)));
  if (!c) throw std::runtime_error(where() + ": cannot allocate a hiredis context");
  if (c->err) throw std::runtime_error(where() + ": connect: " + c->errstr);
  // The connect timeout does not cover reads and writes; this sets SO_RCVTIMEO/SO_SNDTIMEO.
  if (redisSetTimeout(c.get(), to_timeval(timeout_)) != REDIS_OK) {
    throw std::runtime_error(where() + ": setting the timeout: " + c->errstr);
  }
  context_ = std::move(c);
  if (password_.empty()) return;
  std::vector<std::string> auth{"AUTH"};
  if (!user_.empty()) auth.push_back(user_);
  auth.push_back(password_);
  auto r = command(std::move(auth));
  if (r.is_error()) {
    context_.reset();
    throw std::runtime_error(where() + ": AUTH refused: " + r.str);
  }
}

resp::reply raw_client::command(std::vector<std::string> args) {
  if (args.empty()) throw std::invalid_argument(where() + ": empty command");
  if (!context_) connect();
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (r == nullptr) {
    // hiredis leaves the context unusable after an error; the next command reconnects.
    std::string reason = context_->errstr;
    context_.reset();
    // SO_RCVTIMEO expiring shows up as EAGAIN; say what it means.
    if (reason.find("temporarily unavailable") != std::string::npos) {
      reason = "no reply within " + std::to_string(timeout_.count()) + " ms";
    }
    throw std::runtime_error(where() + ": " + args[0] + ": " +
                             (reason.empty() ? "I/O error or timeout" : reason));
  }
  auto value = convert(*r);
  freeReplyObject(r);
  return value;
}

void raw_client::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  if (context_ && redisSetTimeout(context_.get(), to_timeval(timeout_)) != REDIS_OK) {
    context_.reset();  // reconnect with the new timeout on the next command
  }
}

}  // namespace relock::test
