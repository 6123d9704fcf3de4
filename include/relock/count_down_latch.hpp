// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::count_down_latch: Redisson's RCountDownLatch in C++, on the same data
/// (docs/data-layout.md §7): the name holds the count; count_down decrements it, deletes it at
/// zero and then publishes 0 on redisson_countdownlatch__channel__{name} (literal braces, as
/// Redisson writes it), which opens every awaiter in every process and language at once: sync
/// and async alike (redisson/redisson#5349 completed only the first async one). A latch whose
/// name holds nothing is open.
///
/// Waiting: an awaiter listens on the channel, and looks at the count again every second, so a
/// lost message delays it by at most that.
///
/// A cheap handle; it must not outlive its client. Thread-safe. Misuse: an empty or oversized
/// name throws errc::invalid_argument when the handle is made; a count below 1 or a negative or
/// absurd wait throws it before any I/O; a name holding anything but an integer string gives
/// errc::wrong_type, changing nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/core_access.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>

namespace relock {

/// \copydoc count_down_latch.hpp
class RELOCK_API count_down_latch {
 public:
  /// The name it was made with.
  const std::string& name() const { return name_; }
  /// The name after the client's name_mapper.
  const std::string& key() const { return key_; }

  /// \name Blocking (throw relock::error on failure)
  ///@{

  /// Sets the count only when the name holds nothing (the latch is open); false otherwise.
  bool try_set_count(std::int64_t count);
  /// Decrements the count; at zero, deletes it and opens the latch for every awaiter. Does
  /// nothing on an open latch.
  void count_down();
  /// The count now; 0 when open.
  std::int64_t count() const;
  /// Waits until the latch opens; errc::cancelled on a stop request.
  void await(std::stop_token stop = {});
  /// Waits up to `wait`; false when the latch was still closed then.
  bool await(std::chrono::milliseconds wait, std::stop_token stop = {});
  /// Deletes the latch (opening it for every awaiter); false when it was open already.
  bool delete_latch();
  ///@}

  /// \name Async
  ///@{

  /// void(std::error_code, bool opened): waits up to `wait` (empty: for ever).
  template <class Token>
  auto async_await(std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                   Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, bool)>(
        [self = *this](auto handler, std::optional<std::chrono::milliseconds> w,
                       std::stop_token s) mutable {
          auto c = detail::erase_cancellable<bool>(std::move(handler), self.io(), std::move(s));
          self.start_await(w, std::move(c.stop), std::move(c.done));
        },
        token, wait, std::move(stop));
  }
  /// void(std::error_code): as count_down().
  template <class Token>
  auto async_count_down(Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler) mutable {
          self.start_count_down(detail::erase<>(std::move(handler), self.io()));
        },
        token);
  }
  ///@}

 private:
  friend class client;  // makes every handle
  count_down_latch(std::shared_ptr<detail::client_core> core, std::string name);

  using await_done = detail::answer<bool>;
  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_await(std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                   await_done done);
  void start_count_down(detail::answer<> done);
  bool await_blocking(std::optional<std::chrono::milliseconds> wait, std::stop_token stop);

  std::shared_ptr<detail::client_core> core_;
  std::string name_;
  std::string key_;
  std::string channel_;
};

}  // namespace relock
