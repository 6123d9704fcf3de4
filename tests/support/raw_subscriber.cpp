// SPDX-License-Identifier: Apache-2.0
#include "support/raw_subscriber.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <stdexcept>

#include "support/redis_server.hpp"

namespace relock::test {
namespace {

timeval timeval_of(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

void raw_subscriber::context_deleter::operator()(redisContext* c) const { redisFree(c); }

raw_subscriber::raw_subscriber(const redis_server& server, const std::string& channel,
                               bool sharded) {
  context_.reset(redisConnectWithTimeout(server.host().c_str(), server.port(),
                                         timeval_of(std::chrono::seconds(5))));
  if (!context_ || context_->err) throw std::runtime_error("raw_subscriber: cannot connect");
  const auto& o = server.options();
  if (!o.password.empty()) {
    void* r = o.acl_user.empty() ? redisCommand(context_.get(), "AUTH %s", o.password.c_str())
                                 : redisCommand(context_.get(), "AUTH %s %s", o.acl_user.c_str(),
                                                o.password.c_str());
    if (r == nullptr) throw std::runtime_error("raw_subscriber: AUTH failed");
    freeReplyObject(r);
  }
  void* r = redisCommand(context_.get(), sharded ? "SSUBSCRIBE %b" : "SUBSCRIBE %b", channel.data(),
                         channel.size());
  if (r == nullptr) throw std::runtime_error("raw_subscriber: SUBSCRIBE failed");
  freeReplyObject(r);  // the confirmation: from here on, every publish reaches us
}

raw_subscriber::~raw_subscriber() = default;

std::optional<std::string> raw_subscriber::next(std::chrono::milliseconds timeout) {
  redisSetTimeout(context_.get(), timeval_of(timeout));
  void* raw = nullptr;
  if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) return std::nullopt;
  auto* r = static_cast<redisReply*>(raw);
  std::optional<std::string> payload;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
    payload.emplace(r->element[2]->str, r->element[2]->len);
  }
  freeReplyObject(r);
  return payload;
}

}  // namespace relock::test
