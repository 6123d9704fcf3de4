// SPDX-License-Identifier: Apache-2.0
// Subscriptions: one subscriber connection per node, shared by every listener in the process.
//
// A channel is subscribed once, however many listeners it has (reference-counted), and is
// unsubscribed when its last listener leaves. A listener is confirmed only after the server
// confirmed the channel, so "subscribe, then try" never misses a message in between
// (data-layout §8). After a reconnect every channel that still has listeners is subscribed again
// from this record, and its listeners hear `resubscribed`: messages may have been lost in the
// gap, so they re-check. A server that refuses an (un)subscribe (BUSY while a script runs,
// LOADING after a restart) is asked again shortly: a refused SUBSCRIBE left alone would leave
// every later waiter on its channel deaf, and a refused UNSUBSCRIBE leaves the channel
// subscribed on the server, which its next listener can use at once. A sharded subscriber also
// takes classic listeners (add_classic) on the same connection: Redis lets one connection hold
// SUBSCRIBE and SSUBSCRIBE channels side by side, and tells their messages apart.
//
// State lives on the I/O thread; subscribe() and subscription::reset() may be called from any
// thread. Listener callbacks run on the I/O thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <relock/detail/unique_function.hpp>
#include "net/connection.hpp"
#include "topology/redirect.hpp"

namespace relock::pubsub {

// resubscribed: the channel is back after a reconnect (messages may have been lost);
// disconnected: the subscriber connection dropped (nothing will be heard until resubscribed).
enum class event_kind { message, resubscribed, disconnected };

struct event {
  event_kind kind;
  std::string_view channel;
  std::string_view payload;  // empty but for messages
};

using listener_function = std::function<void(const event&)>;

class subscriber;

struct listener {
  std::string channel;
  listener_function on_event;
  bool classic = false;  // SUBSCRIBE whatever the subscriber's own mode (add_classic)
};
using listener_ptr = std::shared_ptr<listener>;

// A listener's handle: while it lives, the listener hears its channel.
class subscription {
 public:
  subscription() = default;
  subscription(std::weak_ptr<subscriber> owner, listener_ptr l)
      : owner_(std::move(owner)), listener_(std::move(l)) {}
  subscription(subscription&&) noexcept = default;
  subscription& operator=(subscription&& other) noexcept;
  ~subscription() { reset(); }

  void reset();
  explicit operator bool() const { return listener_ != nullptr; }

 private:
  std::weak_ptr<subscriber> owner_;
  listener_ptr listener_;
};

using confirm_callback = detail::unique_function<void(std::error_code)>;

// Where listeners join channels: one subscriber (one server, or classic pub/sub in a cluster),
// or a subscriber per cluster node (sharded pub/sub, subscriber_set.hpp). I/O thread only.
class channels {
 public:
  virtual ~channels() = default;
  // `confirmed` runs once the server confirmed the channel, or with errc::timeout / a
  // connection error; the listener stays either way until removed.
  virtual listener_ptr add(std::string channel, listener_function on_event,
                           confirm_callback confirmed) = 0;
  // The same with classic SUBSCRIBE whatever the mode of these channels: for a channel that
  // every publisher sends with plain PUBLISH, even in a cluster (the delayed queue's,
  // data-layout §9). A classic message reaches every node of a cluster, so any node will do.
  virtual listener_ptr add_classic(std::string channel, listener_function on_event,
                                   confirm_callback confirmed) = 0;
  virtual void remove(const listener_ptr& l) = 0;
  virtual asio::io_context& io() = 0;
};

// A channel this subscriber lost to another node (sharded pub/sub: the slot moved, the server
// ended the subscription or answered MOVED): its listeners, with the confirmations still due.
struct moved_channel {
  std::string channel;
  std::vector<std::pair<listener_ptr, confirm_callback>> listeners;
  std::optional<topology::redirect> moved_to;  // when the server named the new owner
};

class subscriber : public std::enable_shared_from_this<subscriber>, public channels {
 public:
  using confirm_callback = pubsub::confirm_callback;

  // `connection` must be in push mode and not yet started.
  static std::shared_ptr<subscriber> create(asio::io_context& io,
                                            std::shared_ptr<net::connection> connection,
                                            std::chrono::milliseconds confirm_timeout,
                                            bool sharded);

  // Any thread. `done` runs on the I/O thread once the server confirmed the channel, or with
  // errc::timeout / a connection error.
  void subscribe(std::string channel, listener_function on_event,
                 detail::unique_function<void(std::error_code, subscription)> done);

  // I/O thread only: the waiting loop's direct interface.
  listener_ptr add(std::string channel, listener_function on_event,
                   confirm_callback confirmed) override;
  listener_ptr add_classic(std::string channel, listener_function on_event,
                           confirm_callback confirmed) override;
  // The same for a listener made elsewhere (one moving in from another node).
  void add(listener_ptr l, confirm_callback confirmed);
  void remove(const listener_ptr& l) override;
  // Sharded pub/sub in a cluster: who takes the channels the server sends elsewhere. Unset, a
  // channel the server ends is simply subscribed again.
  void on_moved(std::function<void(moved_channel)> f) { on_moved_ = std::move(f); }
  // A refusal that does not pass by itself (NOPERM from the user's ACL rules, say): told once
  // per distinct text, with the server's words. The channels are asked again every second.
  void on_refused(std::function<void(const std::string&)> f) { on_refused_ = std::move(f); }
  // The same, told of every such refused subscribe (each second's retry too), with a channel it
  // named: what an observer counts.
  void on_each_refusal(std::function<void(const std::string& channel, const std::string& text)> f) {
    on_each_refusal_ = std::move(f);
  }

  // I/O thread only. Channels the server holds for us or is about to (for tests: no growth).
  std::size_t channel_count() const { return channels_.size(); }
  // I/O thread only. How many (un)subscribe commands the server has refused (for tests).
  std::size_t refusals() const { return refusals_; }
  net::connection& connection() { return *connection_; }
  asio::io_context& io() override { return io_; }
  void close();

 private:
  enum class phase { subscribing, subscribed, unsubscribing };
  struct confirmation {
    listener_ptr who;
    confirm_callback callback;
    std::unique_ptr<asio::steady_timer> timer;
  };
  // A channel as the server holds it: its name and whether it is sharded (SSUBSCRIBE).
  struct channel_key {
    std::string name;
    bool sharded = false;
    bool operator==(const channel_key&) const = default;
  };
  struct channel_key_hash {
    std::size_t operator()(const channel_key& k) const noexcept {
      return std::hash<std::string>{}(k.name) ^ static_cast<std::size_t>(k.sharded);
    }
  };
  struct channel_state {
    phase state = phase::subscribing;
    bool confirmed_before = false;  // so a confirmation after a reconnect tells listeners
    std::vector<listener_ptr> listeners;
    std::vector<std::shared_ptr<confirmation>> waiting;
  };
  using channel_map = std::unordered_map<channel_key, channel_state, channel_key_hash>;
  // An (un)subscribe the server has not fully answered: one confirmation per channel, or one
  // error for the whole command. Answers come in order, so an error answers the oldest
  // command that has had no confirmation yet.
  struct sent_command {
    bool subscribe;
    bool sharded;
    std::vector<std::string> due;
    bool answered_any = false;
  };

  subscriber(asio::io_context& io, std::shared_ptr<net::connection> connection,
             std::chrono::milliseconds confirm_timeout, bool sharded);
  void start();
  void on_push(resp::reply& push);
  void on_ready();
  void on_down();
  channel_key key_of(const listener& l) const { return {l.channel, sharded_ && !l.classic}; }
  void send(bool subscribe, bool sharded, const std::vector<std::string_view>& channels);
  void confirmed(const channel_key& channel);
  void unsubscribed(const channel_key& channel);
  void deliver(const channel_key& channel, std::string_view payload);
  void hand_over(channel_map::iterator it, std::optional<topology::redirect> moved_to);
  void refused(const resp::reply& error);
  void answered(bool subscribe, const channel_key& channel);
  void refused_moved(const topology::redirect& r);
  void retry_later(std::chrono::milliseconds after);
  void retry();

  asio::io_context& io_;
  std::shared_ptr<net::connection> connection_;
  std::chrono::milliseconds confirm_timeout_;
  bool sharded_;  // the mode of add(); add_classic's listeners are classic either way
  channel_map channels_;
  std::function<void(moved_channel)> on_moved_;
  std::function<void(const std::string&)> on_refused_;
  std::function<void(const std::string&, const std::string&)> on_each_refusal_;
  std::string refusal_told_;       // the last refusal on_refused_ heard of
  std::deque<sent_command> sent_;  // since the connection was last ready, oldest first
  asio::steady_timer retry_timer_;
  bool retry_due_ = false;
  unsigned retry_generation_ = 0;  // a timer armed before the connection dropped does nothing
  std::size_t refusals_ = 0;
};

}  // namespace relock::pubsub
