// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::delayed_queue: Redisson's RDelayedQueue in C++, on the same data (docs/data-layout.md
/// §9). An element offered with a delay waits in the delayed queue's own keys and, once due,
/// moves to the destination: a plain list that client.blocking_queue(destination) takes from
/// (Redisson's RBlockingQueue), so Java and C++ producers and consumers share one queue.
///
/// The transfer: while a client has a delayed_queue handle on a destination, that client moves
/// due elements to it (one script moves each element exactly once, whatever other clients, Java
/// or C++, run the transfer at the same time), on a timer set to the earliest element's due time
/// and on the channel's announcements of an earlier one, and at least once a second whatever it
/// heard, so a lost subscription delays an element by at most that (Redisson's transfer stops
/// for good when its subscription is lost: redisson/redisson#4088, #5575, #6020). Due times are
/// wall-clock milliseconds of the offering client's clock, as Redisson's are: clients with
/// clocks apart deliver early or late by that much.
///
/// Elements are packed as config::delayed_queue_layout says (Redisson 4.x by default, or 3.x),
/// since a Java transfer task reads its own version's layout only; relock's transfer reads both.
/// Values are bytes; a Java side uses StringCodec (or ByteArrayCodec) to see the same bytes.
///
/// A cheap handle; it must not outlive its client. Misuse: an empty destination name (or one
/// over 64 KiB), a negative or absurd delay, a value over config::max_value_size throw
/// errc::invalid_argument before any I/O; keys of another type give errc::wrong_type, changing
/// nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <asio/async_result.hpp>
#include <relock/detail/completion.hpp>
#include <relock/detail/core_access.hpp>
#include <relock/detail/export.hpp>
#include <relock/errors.hpp>

namespace relock {

/// \copydoc delayed_queue.hpp
class RELOCK_API delayed_queue {
 public:
  /// The name of the blocking queue it feeds.
  const std::string& destination() const { return destination_; }

  /// \name Blocking (throw relock::error on failure)
  ///@{

  /// Puts `value` in the destination once `delay` has passed (0: at the next transfer).
  void offer(std::string_view value, std::chrono::milliseconds delay);
  std::int64_t size() const;  ///< elements not yet due
  /// Whether an element not yet due has the value `value`.
  bool contains(std::string_view value) const;
  /// Removes the first element not yet due whose value is `value`; false when there was none.
  bool remove(std::string_view value);
  /// Deletes every element not yet due (the destination keeps what it has).
  void clear();
  /// Stops this client's transfer for the destination (Redisson's destroy()); elements stay.
  void destroy();
  ///@}

  /// void(std::error_code), with any completion token.
  template <class Token>
  auto async_offer(std::string value, std::chrono::milliseconds delay, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code)>(
        [self = *this](auto handler, std::string v, std::chrono::milliseconds d) mutable {
          self.start_offer(std::move(v), d, detail::erase<>(std::move(handler), self.io()));
        },
        token, std::move(value), delay);
  }

 private:
  friend class client;  // makes every handle
  // Starts this client's transfer for `destination` (if not running already).
  delayed_queue(std::shared_ptr<detail::client_core> core, std::string destination);

  asio::io_context& io() const { return detail::io_of(*core_); }
  void start_offer(std::string value, std::chrono::milliseconds delay, detail::answer<> done);

  std::shared_ptr<detail::client_core> core_;
  std::string destination_;
  std::string key_, list_, timeouts_, channel_;
  std::shared_ptr<void> transfer_;  // keeps this client's transfer running
};

}  // namespace relock
