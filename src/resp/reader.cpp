// SPDX-License-Identifier: Apache-2.0
#include "resp/reader.hpp"

#include <hiredis/read.h>

#include <new>
#include <utility>

namespace relock::resp {
namespace {

// hiredis hands each new value its parent task; arrays are sized up front, so a child can be
// built in place in its parent's vector and its address stays valid while siblings arrive. A
// root goes to the reader's one slot (task->privdata): hiredis builds one reply at a time, and
// next() moves it out before the next begins, so no reply costs a heap object of its own.
void* place(const redisReadTask* task, reply&& value) {
  reply& slot =
      task->parent != nullptr
          ? static_cast<reply*>(task->parent->obj)->elements[static_cast<std::size_t>(task->idx)]
          : *static_cast<reply*>(task->privdata);
  slot = std::move(value);
  return &slot;
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

// Called only for a root (children live inside it): a reply dropped unfinished, on an error or
// when the reader goes. The slot is the reader's; emptying it is all there is to free.
void free_object(void* obj) { *static_cast<reply*>(obj) = reply{}; }

redisReplyObjectFunctions functions = {create_string, create_array, create_integer, create_nil,
                                       free_object};

}  // namespace

reader::reader() : impl_(redisReaderCreateWithFunctions(&functions)) {
  if (impl_ == nullptr) throw std::bad_alloc();
  impl_->privdata = &root_;
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
  return std::exchange(root_, reply{});
}

}  // namespace relock::resp
