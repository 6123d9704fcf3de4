// SPDX-License-Identifier: Apache-2.0
#include "pubsub/subscriber.hpp"

#include <algorithm>

#include <asio/dispatch.hpp>
#include <asio/post.hpp>
#include <relock/errors.hpp>

#include "topology/slot.hpp"

namespace relock::pubsub {

subscription& subscription::operator=(subscription&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    listener_ = std::move(other.listener_);
  }
  return *this;
}

void subscription::reset() {
  if (!listener_) return;
  if (auto owner = owner_.lock()) {
    asio::dispatch(owner->io(), [owner, l = std::move(listener_)] { owner->remove(l); });
  }
  listener_.reset();
}

std::shared_ptr<subscriber> subscriber::create(asio::io_context& io,
                                               std::shared_ptr<net::connection> connection,
                                               std::chrono::milliseconds confirm_timeout,
                                               bool sharded) {
  std::shared_ptr<subscriber> s(
      new subscriber(io, std::move(connection), confirm_timeout, sharded));
  s->start();
  return s;
}

subscriber::subscriber(asio::io_context& io, std::shared_ptr<net::connection> connection,
                       std::chrono::milliseconds confirm_timeout, bool sharded)
    : io_(io),
      connection_(std::move(connection)),
      confirm_timeout_(confirm_timeout),
      sharded_(sharded),
      retry_timer_(io) {}

void subscriber::start() {
  std::weak_ptr<subscriber> weak = shared_from_this();
  connection_->on_push([weak](resp::reply& push) {
    if (auto self = weak.lock()) self->on_push(push);
  });
  connection_->on_ready([weak] {
    if (auto self = weak.lock()) self->on_ready();
  });
  connection_->on_down([weak] {
    if (auto self = weak.lock()) self->on_down();
  });
}

void subscriber::close() {
  ++retry_generation_;
  retry_timer_.cancel();
  connection_->close();
  auto channels = std::move(channels_);
  channels_.clear();
  for (auto& [name, state] : channels) {
    for (auto& c : state.waiting) {
      c->timer->cancel();
      if (c->callback) std::exchange(c->callback, {})(errc::cancelled);
    }
  }
}

void subscriber::subscribe(std::string channel, listener_function on_event,
                           detail::unique_function<void(std::error_code, subscription)> done) {
  asio::dispatch(io_, [self = shared_from_this(), channel = std::move(channel),
                       on_event = std::move(on_event), done = std::move(done)]() mutable {
    auto l = std::make_shared<listener_ptr>();
    *l = self->add(std::move(channel), std::move(on_event),
                   [self, l, done = std::move(done)](std::error_code ec) mutable {
                     if (ec) {
                       self->remove(*l);
                       done(ec, subscription());
                     } else {
                       done(ec, subscription(self, std::move(*l)));
                     }
                   });
  });
}

listener_ptr subscriber::add(std::string channel, listener_function on_event,
                             confirm_callback confirmed) {
  auto l = std::make_shared<listener>(listener{std::move(channel), std::move(on_event), false});
  add(l, std::move(confirmed));
  return l;
}

listener_ptr subscriber::add_classic(std::string channel, listener_function on_event,
                                     confirm_callback confirmed) {
  auto l = std::make_shared<listener>(listener{std::move(channel), std::move(on_event), true});
  add(l, std::move(confirmed));
  return l;
}

void subscriber::add(listener_ptr l, confirm_callback confirmed) {
  const channel_key channel = key_of(*l);
  auto [it, fresh] = channels_.try_emplace(channel);
  channel_state& state = it->second;
  state.listeners.push_back(l);
  if (state.state == phase::subscribed) {
    // Already confirmed: no round trip. Posted, so the caller never re-enters itself.
    asio::post(io_, [confirmed = std::move(confirmed)]() mutable { confirmed({}); });
    return;
  }
  auto c = std::make_shared<confirmation>();
  c->who = l;
  c->callback = std::move(confirmed);
  c->timer = std::make_unique<asio::steady_timer>(io_, confirm_timeout_);
  c->timer->async_wait([weak = weak_from_this(), c, channel](std::error_code ec) {
    auto self = weak.lock();
    if (ec || !c->callback || !self) return;
    // Its listener stays; when the channel is confirmed at last, listeners hear `resubscribed`
    // (they may have missed messages meanwhile).
    auto it = self->channels_.find(channel);
    if (it != self->channels_.end()) it->second.confirmed_before = true;
    std::exchange(c->callback, {})(errc::timeout);
  });
  state.waiting.push_back(std::move(c));
  // While unsubscribing, the `unsubscribe` confirmation sees listeners and subscribes again.
  if (fresh && connection_->ready()) send(true, channel.sharded, {channel.name});
}

void subscriber::remove(const listener_ptr& l) {
  if (!l) return;
  auto it = channels_.find(key_of(*l));
  if (it == channels_.end()) return;
  channel_state& state = it->second;
  std::erase(state.listeners, l);
  std::erase_if(state.waiting, [&](const auto& c) { return c->who == l; });
  if (!state.listeners.empty() || state.state == phase::unsubscribing) return;
  if (!connection_->ready()) {
    channels_.erase(it);  // nothing held on the server: on reconnect it is simply not renewed
    return;
  }
  state.state = phase::unsubscribing;
  send(false, it->first.sharded, {it->first.name});
}

void subscriber::send(bool subscribe, bool sharded, const std::vector<std::string_view>& channels) {
  // Not ready: on_ready subscribes what is due, and the server holds nothing to unsubscribe.
  if (!connection_->ready()) return;
  static constexpr std::string_view verbs[2][2] = {{"UNSUBSCRIBE", "SUNSUBSCRIBE"},
                                                   {"SUBSCRIBE", "SSUBSCRIBE"}};
  std::vector<std::string_view> argv{verbs[subscribe][sharded]};
  argv.insert(argv.end(), channels.begin(), channels.end());
  resp::request r;
  r.push(std::span<const std::string_view>(argv));
  sent_.push_back(
      sent_command{subscribe, sharded, std::vector<std::string>(channels.begin(), channels.end())});
  // Answers arrive as pushes (on_push); a lost connection shows up as on_down and a resubscribe.
  connection_->send(std::move(r), net::clock::time_point::max(),
                    [](std::error_code, net::reply_span) {});
}

void subscriber::on_push(resp::reply& push) {
  if (push.is_error()) return refused(push);
  if (!push.is_array() || push.elements.size() < 2) return;
  const std::string& kind = push.elements[0].str;
  // The sharded kinds are the classic ones with an `s` before them.
  const bool sharded = kind.starts_with('s') && kind != "subscribe";
  const channel_key channel{push.elements[1].str, sharded};
  const std::string_view verb = std::string_view(kind).substr(sharded ? 1 : 0);
  if (verb == "message") {
    if (push.elements.size() >= 3) deliver(channel, push.elements[2].str);
  } else if (verb == "subscribe") {
    answered(true, channel);
    confirmed(channel);
  } else if (verb == "unsubscribe") {
    answered(false, channel);
    unsubscribed(channel);
  }
}

void subscriber::answered(bool subscribe, const channel_key& channel) {
  for (auto it = sent_.begin(); it != sent_.end(); ++it) {
    if (it->subscribe != subscribe || it->sharded != channel.sharded) continue;
    auto c = std::find(it->due.begin(), it->due.end(), channel.name);
    if (c == it->due.end()) continue;
    it->due.erase(c);
    it->answered_any = true;
    if (it->due.empty()) sent_.erase(it);
    return;
  }
  // Not ours: the server ended a sharded subscription by itself (unsubscribed() follows it).
}

void subscriber::confirmed(const channel_key& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || it->second.state != phase::subscribing) return;
  channel_state& state = it->second;
  state.state = phase::subscribed;
  const bool again = std::exchange(state.confirmed_before, true);
  auto waiting = std::move(state.waiting);
  state.waiting.clear();
  // Copies: a callback may add or remove listeners of this very channel.
  auto listeners = state.listeners;
  for (auto& c : waiting) {
    if (c->callback) std::exchange(c->callback, {})({});
  }
  if (!again) return;
  for (auto& l : listeners) {
    l->on_event(event{event_kind::resubscribed, channel.name, {}});
  }
}

void subscriber::unsubscribed(const channel_key& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  if (it->second.state != phase::unsubscribing) {
    // Not asked for: the server ended a sharded subscription because the channel's slot moved
    // (or its node stopped serving it). Later messages go to the new owner: follow them there.
    if (channel.sharded && on_moved_ && !it->second.listeners.empty()) {
      hand_over(it, std::nullopt);
    }
    return;
  }
  if (it->second.listeners.empty()) {
    channels_.erase(it);
    return;
  }
  // Someone joined while we were leaving: join again.
  it->second.state = phase::subscribing;
  send(true, channel.sharded, {channel.name});
}

void subscriber::deliver(const channel_key& channel, std::string_view payload) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  auto listeners = it->second.listeners;
  for (auto& l : listeners) l->on_event(event{event_kind::message, channel.name, payload});
}

void subscriber::on_down() {
  sent_.clear();  // unanswered commands died with the connection; on_ready sends what is due
  ++retry_generation_;
  retry_due_ = false;
  retry_timer_.cancel();
  std::vector<std::pair<std::string, listener_ptr>> told;
  for (auto it = channels_.begin(); it != channels_.end();) {
    if (it->second.listeners.empty()) {
      it = channels_.erase(it);
    } else {
      it->second.state = phase::subscribing;
      for (auto& l : it->second.listeners) told.emplace_back(it->first.name, l);
      ++it;
    }
  }
  // Waiters sleeping on a long TTL must not sleep through an outage: they retry now, and fail
  // or succeed with the command connection.
  for (auto& [channel, l] : told) l->on_event(event{event_kind::disconnected, channel, {}});
}

void subscriber::on_ready() {
  std::vector<std::string_view> classic;
  for (auto& [key, state] : channels_) {
    if (state.state != phase::subscribing) continue;
    if (key.sharded) {
      send(true, true, {key.name});  // SSUBSCRIBE takes channels of one slot only
    } else {
      classic.push_back(key.name);
    }
  }
  if (!classic.empty()) send(true, false, classic);
}

// An error answers the oldest (un)subscribe not yet answered at all (sent_).
void subscriber::refused(const resp::reply& error) {
  ++refusals_;
  auto oldest = std::find_if(sent_.begin(), sent_.end(),
                             [](const sent_command& c) { return !c.answered_any; });
  std::optional<sent_command> command;
  if (oldest != sent_.end()) {
    command = std::move(*oldest);
    sent_.erase(oldest);
  }
  if (auto r = topology::parse_redirect(error.str)) return refused_moved(*r);
  if (!command) return;
  if (!command->subscribe) {
    // The server kept these subscriptions: a listener that joined meanwhile has its channel now,
    // and one nobody wants any more is left again later.
    for (const auto& name : command->due) {
      const channel_key key{name, command->sharded};
      auto it = channels_.find(key);
      if (it == channels_.end() || it->second.state != phase::unsubscribing) continue;
      if (it->second.listeners.empty()) {
        it->second.state = phase::subscribed;  // retry() leaves it
      } else {
        it->second.state = phase::subscribing;
        confirmed(key);
      }
    }
  }
  // BUSY (a script runs) and LOADING (a restart) pass in moments; anything else is asked
  // again less often, so a lasting refusal does not flood the server.
  const std::string_view code = error.error_code();
  const bool passing = code == "BUSY" || code == "LOADING" || code == "TRYAGAIN" ||
                       code == "CLUSTERDOWN" || code == "MASTERDOWN";
  if (!passing && on_each_refusal_ && command && command->subscribe && !command->due.empty()) {
    on_each_refusal_(command->due.front(), error.str);
  }
  if (!passing && on_refused_ && error.str != refusal_told_) {
    refusal_told_ = error.str;
    on_refused_((command && command->subscribe ? "a subscription was refused: "
                                               : "an unsubscribe was refused: ") +
                error.str);
  }
  retry_later(passing ? std::chrono::milliseconds(100) : std::chrono::milliseconds(1000));
}

// An SSUBSCRIBE answered MOVED: the error names the slot, not the channel, so every channel of
// that slot still waiting for its confirmation here goes.
void subscriber::refused_moved(const topology::redirect& r) {
  if (!on_moved_) return;
  for (auto it = channels_.begin(); it != channels_.end();) {
    auto next = std::next(it);
    if (it->first.sharded && it->second.state == phase::subscribing &&
        topology::slot_of(it->first.name) == r.slot) {
      hand_over(it, r);
    }
    it = next;
  }
}

void subscriber::retry_later(std::chrono::milliseconds after) {
  if (std::exchange(retry_due_, true)) return;  // one is due already
  retry_timer_.expires_after(after);
  retry_timer_.async_wait(
      [weak = weak_from_this(), generation = ++retry_generation_](std::error_code) {
        auto self = weak.lock();
        if (!self || generation != self->retry_generation_) return;
        self->retry_due_ = false;
        self->retry();
      });
}

// Asks again for what the server refused: channels with listeners and no subscribe on its way,
// and channels the server keeps that nobody listens to.
void subscriber::retry() {
  if (!connection_->ready()) return;  // on_ready will
  // By [subscribe][sharded]: the classic ones go together, the sharded ones one by one
  // (SSUBSCRIBE and SUNSUBSCRIBE take channels of one slot only).
  std::vector<std::string_view> due[2][2];
  for (auto& [key, state] : channels_) {
    if (state.state == phase::subscribing && !state.listeners.empty()) {
      const bool on_its_way = std::any_of(sent_.begin(), sent_.end(), [&](const auto& c) {
        return c.subscribe && c.sharded == key.sharded &&
               std::find(c.due.begin(), c.due.end(), key.name) != c.due.end();
      });
      if (!on_its_way) due[1][key.sharded].push_back(key.name);
    } else if (state.state == phase::subscribed && state.listeners.empty()) {
      state.state = phase::unsubscribing;
      due[0][key.sharded].push_back(key.name);
    }
  }
  for (bool subscribe : {true, false}) {
    if (!due[subscribe][false].empty()) send(subscribe, false, due[subscribe][false]);
    for (auto c : due[subscribe][true]) send(subscribe, true, {c});
  }
}

void subscriber::hand_over(channel_map::iterator it, std::optional<topology::redirect> moved_to) {
  moved_channel moved{it->first.name, {}, std::move(moved_to)};
  for (auto& l : it->second.listeners) {
    confirm_callback due;
    for (auto& c : it->second.waiting) {
      if (c->who == l && c->callback) {
        c->timer->cancel();
        due = std::exchange(c->callback, {});
      }
    }
    moved.listeners.emplace_back(l, std::move(due));
  }
  channels_.erase(it);
  on_moved_(std::move(moved));
}

}  // namespace relock::pubsub
