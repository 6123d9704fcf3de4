// SPDX-License-Identifier: Apache-2.0
// Type erasure for Asio completion handlers (Debian's Asio 1.22 has no
// any_completion_handler). The handler is always invoked through its associated executor by
// post, never inline inside relock's own I/O callback: a caller's handler may block or re-enter
// relock, and must not do so on relock's I/O stack.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <relock/detail/unique_function.hpp>

namespace relock::detail {

template <class Signature>
using completion = unique_function<Signature>;

// How relock's internals finish an async operation whose results are Ts: the error, the detail
// for humans (the server's text, the owner concerned; read only with an error), then the
// results. The public handler gets the error and the results; a handler made by
// relock::with_detail also gets the detail, through set_detail.
template <class... Ts>
using answer = completion<void(std::error_code, std::string, Ts...)>;

// A handler that wants the detail before it is called (relock::with_detail's).
template <class Handler>
concept takes_detail = requires(Handler& h, std::string text) {
  h.set_detail(std::move(text));
};

// Wraps `handler`, whose results are Ts, as an answer: calling it posts the handler, with the
// error and the results, to the handler's associated executor (relock's I/O executor when it has
// none), running `before` there first. Once relock's I/O thread has stopped for good (a handle
// used after its client was destroyed), a handler bound to it runs at once instead, on the
// calling thread: nothing else would ever run it.
template <class... Ts, class Handler, class Before>
answer<Ts...> erase_with(Handler&& handler, asio::io_context& io, Before before) {
  auto executor = asio::get_associated_executor(handler, io.get_executor());
  return [executor, &io, before = std::move(before), h = std::forward<Handler>(handler)](
             std::error_code ec, std::string text, Ts... results) mutable {
    if constexpr (takes_detail<std::decay_t<Handler>>) {
      if (ec) h.set_detail(std::move(text));
    }
    if constexpr (std::is_same_v<decltype(executor), asio::io_context::executor_type>) {
      if (&executor.context() == &io && io.stopped()) {
        before();
        std::move(h)(ec, std::move(results)...);
        return;
      }
    }
    asio::post(executor, [before = std::move(before), h = std::move(h), ec,
                          ... r = std::move(results)]() mutable {
      before();
      std::move(h)(ec, std::move(r)...);
    });
  };
}

template <class... Ts, class Handler>
answer<Ts...> erase(Handler&& handler, asio::io_context& io) {
  return detail::erase_with<Ts...>(std::forward<Handler>(handler), io, [] {});
}

// A waiting operation's completion and the stop token it watches.
template <class... Ts>
struct cancellable {
  answer<Ts...> done;
  std::stop_token stop;
};

// As erase, for an operation that waits: the token it watches stops on the caller's `stop` and
// on any cancellation emitted on the handler's Asio cancellation slot (bind_cancellation_slot,
// awaitable operators, parallel groups), so either ends the wait with errc::cancelled. The
// slot is cleared on the handler's executor right before the handler runs, as Asio requires of
// an operation that completes.
template <class... Ts, class Handler>
cancellable<Ts...> erase_cancellable(Handler&& handler, asio::io_context& io,
                                     std::stop_token stop) {
  auto slot = asio::get_associated_cancellation_slot(handler);
  if (!slot.is_connected()) return {detail::erase<Ts...>(std::forward<Handler>(handler), io), stop};
  struct bridge {
    std::stop_source source;
    std::optional<std::stop_callback<std::function<void()>>> from_caller;
  };
  auto b = std::make_shared<bridge>();
  if (stop.stop_possible()) {
    b->from_caller.emplace(stop, [source = b->source]() mutable { source.request_stop(); });
  }
  slot.assign([source = b->source](asio::cancellation_type type) mutable {
    if (type != asio::cancellation_type::none) source.request_stop();
  });
  std::stop_token watched = b->source.get_token();
  return {detail::erase_with<Ts...>(std::forward<Handler>(handler), io,
                                    [slot, b]() mutable {
                                      slot.clear();
                                      b.reset();
                                    }),
          std::move(watched)};
}

}  // namespace relock::detail
