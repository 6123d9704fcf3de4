// SPDX-License-Identifier: Apache-2.0
// Type erasure for Asio completion handlers (Debian's Asio 1.22 has no
// any_completion_handler). The handler is always invoked through its associated executor by
// post, never inline inside relock's own I/O callback: a caller's handler may block or re-enter
// relock, and must not do so on relock's I/O stack.
#pragma once

#include <system_error>
#include <type_traits>
#include <utility>

#include <asio/associated_executor.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <relock/detail/unique_function.hpp>

namespace relock::detail {

template <class Signature>
using completion = unique_function<Signature>;

// Wraps `handler` so that calling the result posts the handler, with its arguments, to the
// handler's associated executor (relock's I/O executor when it has none). Once relock's I/O
// thread has stopped for good (a handle used after its client was destroyed), a handler bound
// to it runs at once instead, on the calling thread: nothing else would ever run it.
template <class... Args, class Handler>
completion<void(Args...)> erase(Handler&& handler, asio::io_context& io) {
  auto executor = asio::get_associated_executor(handler, io.get_executor());
  return [executor, &io, h = std::forward<Handler>(handler)](Args... args) mutable {
    if constexpr (std::is_same_v<decltype(executor), asio::io_context::executor_type>) {
      if (&executor.context() == &io && io.stopped()) {
        std::move(h)(std::move(args)...);
        return;
      }
    }
    asio::post(executor, [h = std::move(h), ... a = std::move(args)]() mutable {
      std::move(h)(std::move(a)...);
    });
  };
}

}  // namespace relock::detail
