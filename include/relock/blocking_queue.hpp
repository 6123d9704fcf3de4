// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::blocking_queue: Redisson's RBlockingQueue in C++, on the same data (docs/data-layout.md
/// §9): a plain Redis list of values under the queue's name. offer appends (RPUSH), poll takes
/// the head (LPOP), take and poll with a wait block until an element comes (BLPOP), so Java and
/// C++ producers and consumers share one queue.
///
/// Values are bytes (std::string). Redisson encodes values with its codec; a Java side that
/// shares the queue must use StringCodec (or ByteArrayCodec) to see the same bytes: its default
/// (Kryo5) writes a binary envelope around each value, and relock hands those bytes over as they
/// are.
///
/// Blocking calls never stall the connections that locks use: each take waiting on the server
/// has a connection of its own. A waiting take rides through a lost connection or a restarted
/// server: it waits again once Redis is back, and never takes an element twice. A take that ends
/// (deadline, stop_token, the client destroyed) while the server may have handed it an element
/// puts that element back at the head of the list. The one loss it cannot prevent is an element
/// the server popped for it just as the connection broke, before the reply reached relock: the
/// same window as any BLPOP client (Redisson's too).
///
/// A cheap handle (client + name); it must not outlive its client. Thread-safe. Misuse: an empty
/// name or one over 64 KiB throws errc::invalid_argument when the handle is made; a value over
/// config::max_value_size, or a negative or absurd wait, throws it before any I/O. A name that
/// holds another Redis type gives errc::wrong_type, changing nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/core_access.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>

namespace relock {

/// \copydoc blocking_queue.hpp
class RELOCK_API blocking_queue {
 public:
  /// The name it was made with.
  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }  ///< the name after the client's name_mapper

  /// \name Blocking (throw relock::error on failure)
  ///@{

  /// Appends `value` at the tail. Always true (Redisson's offer on an unbounded queue).
  bool offer(std::string_view value);
  /// The head, removed; nullopt when the queue is empty.
  std::optional<std::string> poll();
  /// The head, waiting up to `wait` for one; nullopt when none came. A stop request ends the wait
  /// with errc::cancelled.
  std::optional<std::string> poll(std::chrono::milliseconds wait, std::stop_token stop = {});
  /// The head, waiting as long as it takes; errc::cancelled on a stop request.
  std::string take(std::stop_token stop = {});
  /// The number of elements in the queue.
  std::int64_t size() const;
  std::optional<std::string> peek() const;  ///< the head, left in place
  /// Removes the first element equal to `value`; false when there was none.
  bool remove(std::string_view value);
  /// Deletes the queue; false when it was already empty.
  bool clear();
  ///@}

  /// \name Async: any completion token
  /// The handler runs on relock's I/O thread unless it has an executor of its own.
  ///@{

  /// void(std::error_code): appends `value` at the tail, as offer().
  template <class Token>
  auto async_offer(std::string value, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, std::string v) mutable {
          self.start_offer(std::move(v), detail::erase<>(std::move(handler), self.io()));
        },
        token, std::move(value));
  }
  /// void(std::error_code, std::optional<std::string>): waits up to `wait` (empty: no wait, as
  /// poll(); README, "The contract"); nullopt when none came.
  template <class Token>
  auto async_poll(std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                  Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::optional<std::string>)>(
        [self = *this](auto handler, std::optional<std::chrono::milliseconds> w,
                       std::stop_token s) mutable {
          auto c = detail::erase_cancellable<std::optional<std::string>>(std::move(handler),
                                                                         self.io(), std::move(s));
          self.start_poll(w.value_or(std::chrono::milliseconds(0)), std::move(c.stop),
                          std::move(c.done));
        },
        token, wait, std::move(stop));
  }
  /// void(std::error_code, std::string): the head, waiting as long as it takes (take()).
  template <class Token>
  auto async_take(std::stop_token stop, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::string)>(
        [self = *this](auto handler, std::stop_token s) mutable {
          auto c =
              detail::erase_cancellable<std::string>(std::move(handler), self.io(), std::move(s));
          self.start_poll(std::nullopt, std::move(c.stop),
                          [done = std::move(c.done)](std::error_code ec, std::string text,
                                                     std::optional<std::string> value) mutable {
                            if (!ec && !value) {  // cannot happen: said so
                              ec = errc::connection;
                              text = "take ended without an element";
                            }
                            done(ec, std::move(text), std::move(value).value_or(std::string()));
                          });
        },
        token, std::move(stop));
  }
  ///@}

 private:
  friend class client;  // makes every handle
  blocking_queue(std::shared_ptr<detail::client_core> core, std::string name);

  using poll_done = detail::answer<std::optional<std::string>>;
  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_offer(std::string value, detail::answer<> done);
  // `wait`: zero tries once (LPOP), empty waits for ever. nullopt when the wait ran out.
  void start_poll(std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                  poll_done done);
  void check_value(std::string_view value) const;

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
};

}  // namespace relock
