// Type erasure for Asio completion handlers (Debian's Asio 1.22 has no
// any_completion_handler). The handler is always invoked through its associated executor by
// post, never inline inside relock's own I/O callback: a caller's handler may block or re-enter
// relock, and must not do so on relock's I/O stack.
#pragma once

#include <system_error>
#include <utility>

#include <asio/associated_executor.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <relock/detail/unique_function.hpp>

namespace relock::detail {

template <class Signature>
using completion = unique_function<Signature>;

// Wraps `handler` so that calling the result posts the handler, with its arguments, to the
// handler's associated executor (relock's I/O executor when it has none).
template <class... Args, class Handler>
completion<void(Args...)> erase(Handler&& handler, asio::io_context& io) {
  auto executor = asio::get_associated_executor(handler, io.get_executor());
  return [executor, h = std::forward<Handler>(handler)](Args... args) mutable {
    asio::post(executor, [h = std::move(h), ... a = std::move(args)]() mutable {
      std::move(h)(std::move(a)...);
    });
  };
}

}  // namespace relock::detail
