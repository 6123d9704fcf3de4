// SPDX-License-Identifier: Apache-2.0
#include "resp/reader.hpp"

#include <hiredis/read.h>

#include <memory>
#include <new>

namespace relock::resp {
namespace {

// hiredis hands each new value its parent task; arrays are sized up front, so a child can be
// built in place in its parent's vector and its address stays valid while siblings arrive.
void* place(const redisReadTask* task, reply&& value) {
  if (task->parent != nullptr) {
    auto* parent = static_cast<reply*>(task->parent->obj);
    reply& slot = parent->elements[static_cast<std::size_t>(task->idx)];
    slot = std::move(value);
    return &slot;
  }
  return new (std::nothrow) reply(std::move(value));
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
  reply value;
  switch (task->type) {
    case REDIS_REPLY_ERROR:
      value.type = reply_type::error;
      break;
    case REDIS_REPLY_STATUS:
      value.type = reply_type::status;
      break;
    default:
      value.type = reply_type::string;
      break;
  }
  value.str.assign(str, len);
  return place(task, std::move(value));
}

void* create_array(const redisReadTask* task, int elements) {
  reply value;
  value.type = reply_type::array;
  value.elements.resize(elements > 0 ? static_cast<std::size_t>(elements) : 0);
  return place(task, std::move(value));
}

void* create_integer(const redisReadTask* task, long long v) {
  return place(task, reply::make_integer(v));
}

void* create_nil(const redisReadTask* task) { return place(task, reply::make_nil()); }

// Called only for a root object: children live inside it.
void free_object(void* obj) { delete static_cast<reply*>(obj); }

redisReplyObjectFunctions functions = {create_string, create_array, create_integer, create_nil,
                                       free_object};

}  // namespace

reader::reader() : impl_(redisReaderCreateWithFunctions(&functions)) {
  if (impl_ == nullptr) throw std::bad_alloc();
}

reader::~reader() { redisReaderFree(impl_); }

void reader::feed(const char* data, std::size_t size) {
  if (redisReaderFeed(impl_, data, size) != REDIS_OK) throw protocol_error(impl_->errstr);
}

std::optional<reply> reader::next() {
  void* raw = nullptr;
  if (redisReaderGetReply(impl_, &raw) != REDIS_OK) {
    throw protocol_error(impl_->errstr[0] != '\0' ? impl_->errstr : "malformed RESP");
  }
  if (raw == nullptr) return std::nullopt;
  std::unique_ptr<reply> owned(static_cast<reply*>(raw));
  return std::move(*owned);
}

}  // namespace relock::resp
