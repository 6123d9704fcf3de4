// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::with_detail: a completion token adapter that gives async callers the words the
/// synchronous forms throw.
///
/// A relock async operation completes with `void(std::error_code, T...)`: a std::error_code
/// carries a code and no text. Wrapped in with_detail, the same operation completes with
/// `void(std::exception_ptr, T...)` instead, the exception a relock::error whose what() has the
/// detail (the server's text, the owner concerned, why a wait ended) and whose code() is the
/// error code. So a coroutine or a future throws what the synchronous call would:
///
///     co_await m.async_lock(o, {}, relock::with_detail(asio::use_awaitable));  // relock::error
///
/// Any token works inside (a callback taking std::exception_ptr first, asio::use_future,
/// asio::use_awaitable, asio::deferred); the handler's executor, allocator and cancellation slot
/// are the inner handler's. Boost.MySQL's with_diagnostics answers the same need the same way.
#pragma once

#include <exception>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <asio/associator.hpp>
#include <asio/async_result.hpp>
#include <relock/errors.hpp>

namespace relock {

/// The token with_detail makes: `token` is the one the caller gave.
template <class Token>
struct with_detail_t {
  Token token;  ///< the caller's token, which gets the exception_ptr signature
};

/// Wraps `token` so that the operation's error arrives as a std::exception_ptr to a relock::error
/// with the detail; no error arrives as a null exception_ptr.
template <class Token>
with_detail_t<std::decay_t<Token>> with_detail(Token&& token) {
  return {std::forward<Token>(token)};
}

/// \cond
// relock's workings, not its API: out of the reference.
namespace detail {

// The handler relock's operation calls: relock hands it the detail first (set_detail, see
// detail/completion.hpp), then the error code, which it turns into the exception.
template <class Handler>
class detail_handler {
 public:
  explicit detail_handler(Handler handler) : handler_(std::move(handler)) {}

  void set_detail(std::string text) { text_ = std::move(text); }

  template <class... Ts>
  void operator()(std::error_code ec, Ts&&... results) {
    std::exception_ptr failure;
    if (ec) failure = std::make_exception_ptr(error(ec, text_));
    std::move(handler_)(std::move(failure), std::forward<Ts>(results)...);
  }

  Handler handler_;  // public for asio::associator below

 private:
  std::string text_;
};

template <class Signature>
struct exception_signature;

template <class R, class... Ts>
struct exception_signature<R(std::error_code, Ts...)> {
  using type = R(std::exception_ptr, Ts...);
};

}  // namespace detail
/// \endcond
}  // namespace relock

/// \cond
// Asio's customisation points, not relock's API: out of the reference.
template <class Token, class Signature>
struct asio::async_result<relock::with_detail_t<Token>, Signature> {
  template <class Initiation, class RawToken, class... Args>
  static auto initiate(Initiation&& initiation, RawToken&& token, Args&&... args) {
    // Asio 1.22's async_initiate takes the token by lvalue reference: as const as it came.
    using inner = std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>,
                                     const Token&, Token&>;
    return asio::async_initiate<inner,
                                typename relock::detail::exception_signature<Signature>::type>(
        [init = std::forward<Initiation>(initiation)](auto handler, auto&&... a) mutable {
          std::move(init)(relock::detail::detail_handler<decltype(handler)>(std::move(handler)),
                          std::forward<decltype(a)>(a)...);
        },
        static_cast<inner>(token.token), std::forward<Args>(args)...);
  }
};

template <template <class, class> class Associator, class Handler, class DefaultCandidate>
struct asio::associator<Associator, relock::detail::detail_handler<Handler>, DefaultCandidate>
    : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const relock::detail::detail_handler<Handler>& h,
      const DefaultCandidate& c = DefaultCandidate()) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler_, c);
  }
};
/// \endcond
